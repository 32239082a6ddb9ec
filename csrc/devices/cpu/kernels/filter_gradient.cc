#include "devices/cpu/kernels/filter_gradient.h"

#include <ATen/Parallel.h>
#include <ATen/ops/convolution_backward.h>
#include <ATen/ops/im2col.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/zeros.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ge::cpu {
namespace {

// ATen's convolution_backward asked for the weight gradient only (oneDNN's backward-weights
// primitive for float). It reads the weight's shape, not its values: a zero filter made here,
// once, stands in for it.
std::function<void()> OneDnnFilterGradient(const at::Tensor& x, const at::Tensor& dy, const ConvWindow& c,
                                           const at::Tensor& y) {
  at::Tensor filter = at::zeros(y.sizes(), y.options());
  return [=, y = at::Tensor(y)]() mutable {
    auto grads = at::convolution_backward(dy, x, filter, /*bias_sizes=*/std::nullopt, c.stride, c.padding, c.dilation,
                                          /*transposed=*/false, /*output_padding=*/{0, 0}, c.groups,
                                          /*output_mask=*/{false, true, false});
    y.copy_(std::get<1>(grads));
  };
}

// dw [K, C*kh*kw] = dy [K, N*L] . cols [N*L, C*kh*kw], the columns unfolded from x (L = OH*OW):
// one GEMM whose inner dimension is the batch times the image. Groups of one only.
std::function<void()> Im2ColFilterGradient(const at::Tensor& x, const at::Tensor& dy, const ConvWindow& c,
                                           const at::Tensor& y) {
  const int64_t n = x.size(0), k = dy.size(1), l = dy.size(2) * dy.size(3);
  const std::vector<int64_t> kernel = {y.size(2), y.size(3)};
  return [=, y = at::Tensor(y)]() mutable {
    const at::Tensor cols = at::im2col(x, kernel, c.dilation, c.padding, c.stride);  // [N, C*kh*kw, L]
    const at::Tensor rows = cols.transpose(1, 2).reshape({n * l, cols.size(1)});
    const at::Tensor grad = dy.reshape({n, k, l}).transpose(0, 1).reshape({k, n * l});
    at::Tensor out = y.view({k, cols.size(1)});
    at::mm_out(out, grad, rows);
  };
}

}  // namespace

std::vector<KernelCandidate> FilterGradientCandidates(const at::Tensor& x, const at::Tensor& dy, const ConvWindow& c,
                                                      const at::Tensor& y) {
  std::vector<KernelCandidate> out{{"onednn", OneDnnFilterGradient(x, dy, c, y)}};
  if (c.groups == 1 && x.dim() == 4) out.push_back({"im2col_gemm", Im2ColFilterGradient(x, dy, c, y)});
  return out;
}

std::string FilterGradientKey(const at::Tensor& x, const at::Tensor& dy, const ConvWindow& c, const at::Tensor& y) {
  return fmt::format("Conv2DBackpropFilterD {} x={} dy={} w={} stride={} pad={} dilation={} groups={} threads={}",
                     c10::toString(x.scalar_type()), x.sizes(), dy.sizes(), y.sizes(), c.stride, c.padding, c.dilation,
                     c.groups, at::get_num_threads());
}

}  // namespace ge::cpu
