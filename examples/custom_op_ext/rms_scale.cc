// A user's own operator library in C++ (the TORCH_LIBRARY route): a CPU kernel and a Meta
// kernel (the fake implementation torch.compile traces with). Nothing here knows about
// torchair_ge -- loading the library is all it takes for a compiled model to use the op.
#include <torch/library.h>
#include <ATen/ATen.h>

namespace {

// y = x / sqrt(mean(x^2, last dim) + eps) * scale, and the per-row rms as a second output.
std::tuple<at::Tensor, at::Tensor> RmsScaleCpu(const at::Tensor& x, double eps, double scale) {
  at::Tensor rms = (x * x).mean(-1, /*keepdim=*/true).add(eps).sqrt();
  return {x / rms * scale, rms};
}

std::tuple<at::Tensor, at::Tensor> RmsScaleMeta(const at::Tensor& x, double, double) {
  auto rms_shape = x.sizes().vec();
  rms_shape.back() = 1;
  return {at::empty_like(x), at::empty(rms_shape, x.options())};
}

}  // namespace

TORCH_LIBRARY(myext, m) { m.def("rms_scale(Tensor x, float eps, float scale) -> (Tensor, Tensor)"); }
TORCH_LIBRARY_IMPL(myext, CPU, m) { m.impl("rms_scale", RmsScaleCpu); }
TORCH_LIBRARY_IMPL(myext, Meta, m) { m.impl("rms_scale", RmsScaleMeta); }
