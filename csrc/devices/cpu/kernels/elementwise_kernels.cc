// Elementwise kernels over ATen out-variants.
#include <ATen/ops/add.h>
#include <ATen/ops/clamp_min.h>
#include <ATen/ops/div.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/log.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/minimum.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/neg.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/sqrt.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/tanh.h>

#include "devices/cpu/kernel_registry.h"

namespace ge::cpu {

void RegisterElementwiseKernels(CpuKernelRegistry& r) {
  r.RegisterUnary("Identity", [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return y.copy_(x); });
  r.RegisterUnary("Cast", [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return y.copy_(x); });
  r.RegisterUnary("Neg", [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return at::neg_out(y, x); });
  // clamp_min(x, 0) is relu with NaN propagated, as torch.relu does.
  r.RegisterUnary("Relu", [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return at::clamp_min_out(y, x, 0); });
  r.RegisterUnary("Sigmoid", [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return at::sigmoid_out(y, x); });
  r.RegisterUnary("Tanh", [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return at::tanh_out(y, x); });
  r.RegisterUnary("Exp", [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return at::exp_out(y, x); });
  r.RegisterUnary("Log", [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return at::log_out(y, x); });
  r.RegisterUnary("Sqrt", [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return at::sqrt_out(y, x); });
  r.RegisterUnary("Rsqrt", [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return at::rsqrt_out(y, x); });
  r.Register("Gelu", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    GE_ASSIGN_OR_RETURN(std::string mode, a.Attr<std::string>("approximate"));
    return MakeKernel(a.task, [mode, x = a.inputs[0], y = a.outputs[0]]() mutable { at::gelu_out(y, x, mode); });
  });

  r.RegisterBinary("Add", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& { return at::add_out(y, a, b); });
  r.RegisterBinary("Sub", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& { return at::sub_out(y, a, b); });
  r.RegisterBinary("Mul", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& { return at::mul_out(y, a, b); });
  r.RegisterBinary("RealDiv", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& { return at::div_out(y, a, b); });
  r.RegisterBinary("Maximum", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& { return at::maximum_out(y, a, b); });
  r.RegisterBinary("Minimum", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& { return at::minimum_out(y, a, b); });
  r.RegisterBinary("Pow", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& { return at::pow_out(y, a, b); });
}

}  // namespace ge::cpu
