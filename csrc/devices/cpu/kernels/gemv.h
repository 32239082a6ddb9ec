// Products of a few rows with a weight stored [N, K] row-major (nn.Linear's layout; a decode
// step multiplies one token per sequence): every weight row is read once, as one contiguous
// stream, and dotted with the input rows, which stay in L1 -- the product runs at the memory
// bandwidth a decode step is bound by. MKL's and oneDNN's general kernels block and pack for a
// reuse that a few rows cannot have. One candidate of the measured choice (kernel_choice.h).
#pragma once

#include <cstdint>

namespace ge::cpu {

// A decode step of up to eight sequences (batched generate(), beam search). At 16 rows the blocked
// GEMMs of MKL and oneDNN reuse each weight vector enough to win (docs/performance.md).
inline constexpr int64_t kGemvMaxRows = 8;

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

// The same product with eight weight rows read side by side (eight streams where GemvRows reads
// one): which is faster depends on the CPU's prefetchers and memory (gemv_impl.h), so each is a
// candidate of the measured choice.
void GemvInterleavedRows(const GemvArgs& a, int64_t begin, int64_t end);
void GemvInterleaved(const GemvArgs& a);

// The other side: many input rows times a weight of a few rows (n <= kFewColumnsMax outputs per
// row: an MMoE gate over 4 experts, a tower's single logit), where MKL's and oneDNN's kernels
// waste most of their tile on columns that do not exist (512 x 141 x 4 took 21 us in MKL on a
// 2-core Xeon). Each step dots kW / n input rows with every weight row, kW dot products in kW
// accumulators over k, folded together by one horizontal add; the weight stays in L1 and the
// input is read once, front to back. y[m, j] for m in [begin, end), every j < n.
inline constexpr int64_t kFewColumnsMax = 8;
void FewColumnRows(const GemvArgs& a, int64_t begin, int64_t end);
// The same for every m < rows, split over the intra-op threads by input rows.
void FewColumns(const GemvArgs& a);

namespace gemv_detail {  // each body GemvRows and FewColumnRows pick from (tests call each)
void RowsPortable(const GemvArgs& a, int64_t begin, int64_t end);
void RowsAvx2(const GemvArgs& a, int64_t begin, int64_t end);    // CPUs with AVX2 and FMA only
void RowsAvx512(const GemvArgs& a, int64_t begin, int64_t end);  // CPUs with AVX-512F only
void InterleavedAvx2(const GemvArgs& a, int64_t begin, int64_t end);
void InterleavedAvx512(const GemvArgs& a, int64_t begin, int64_t end);
void FewColumnsPortable(const GemvArgs& a, int64_t begin, int64_t end);
void FewColumnsAvx2(const GemvArgs& a, int64_t begin, int64_t end);
void FewColumnsAvx512(const GemvArgs& a, int64_t begin, int64_t end);
}  // namespace gemv_detail

}  // namespace ge::cpu
