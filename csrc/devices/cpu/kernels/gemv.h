// Products of a few rows with a weight stored [N, K] row-major (nn.Linear's layout; a decode
// step multiplies one token per sequence): every weight row is read once, as one contiguous
// stream, and dotted with the input rows, which stay in L1 -- the product runs at the memory
// bandwidth a decode step is bound by. MKL's and oneDNN's general kernels block and pack for a
// reuse that a few rows cannot have. One candidate of the measured choice (kernel_choice.h).
#pragma once

#include <cstdint>

namespace ge::cpu {

inline constexpr int64_t kGemvMaxRows = 4;

struct GemvArgs {
  const float* x;  // rows x k, row stride x_stride
  int64_t rows, x_stride;
  const float* w;  // n x k, contiguous
  int64_t n, k;
  const float* bias;  // n, or null
  float* y;           // rows x n, row stride y_stride
  int64_t y_stride;
};

// y[m, j] = sum_i x[m, i] * w[j, i] (+ bias[j]) for j in [begin, end), every m < rows <= kGemvMaxRows.
// xsimd code for AVX-512 or AVX2 + FMA when the CPU has them (compiled per instruction set,
// picked at run time), a portable loop elsewhere.
void GemvRows(const GemvArgs& a, int64_t begin, int64_t end);

// The same, for every j, split over the intra-op threads by weight rows.
void Gemv(const GemvArgs& a);

namespace gemv_detail {  // each body GemvRows picks from (tests call each)
void RowsPortable(const GemvArgs& a, int64_t begin, int64_t end);
void RowsAvx2(const GemvArgs& a, int64_t begin, int64_t end);    // CPUs with AVX2 and FMA only
void RowsAvx512(const GemvArgs& a, int64_t begin, int64_t end);  // CPUs with AVX-512F only
}  // namespace gemv_detail

}  // namespace ge::cpu
