// y = cᵀ (+ bias per row of c): the Transpose op's block swaps (NCHW <-> NHWC, array_kernels.cc)
// and the last step of a product computed transposed (onednn_linear.h, OneDnnTransposedProduct).
#pragma once

#include <cstdint>

namespace ge::cpu {

// y[m, n] = c[n, m] + bias[n] for n < rows, m < cols: c dense [rows, cols], y rows `y_stride`
// apart, bias [rows] or null. In 8 x 8 tiles (AVX2 registers where the CPU has them), split over
// the intra-op threads.
void TransposeAddBias(const float* c, int64_t rows, int64_t cols, const float* bias, float* y, int64_t y_stride);

}  // namespace ge::cpu
