// Conv2DBackpropFilterD on the CPU: the weight gradient of a convolution, by whichever of two
// implementations measures faster for the shapes (kernel_choice.h). oneDNN's backward-weights
// kernel (through ATen's convolution_backward) is fast where the image is large, and 2-2.5x
// slower than an im2col + one GEMM where it is small and the channels many (8x512x4x4, 3x3:
// 9.5 vs 4.0 ms on an AMD EPYC), so no threshold decides.
#pragma once

#include <functional>
#include <vector>

#include <ATen/core/Tensor.h>

#include "devices/cpu/kernels/kernel_choice.h"

namespace ge::cpu {

// A convolution's window, one value per spatial dim, as ATen takes it.
struct ConvWindow {
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
};

// Every implementation that computes y = dL/dw for input x [N, C, H, W], output gradient
// dy [N, K, OH, OW] and filter y [K, C/groups, kh, kw] with window `c`, named, in a fixed order.
std::vector<KernelCandidate> FilterGradientCandidates(const at::Tensor& x, const at::Tensor& dy, const ConvWindow& c,
                                                      const at::Tensor& y);

// The shapes, window, dtype and threads that decide which candidate is faster.
std::string FilterGradientKey(const at::Tensor& x, const at::Tensor& dy, const ConvWindow& c, const at::Tensor& y);

}  // namespace ge::cpu
