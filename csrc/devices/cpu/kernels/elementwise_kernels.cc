// Elementwise kernels over ATen out-variants.
//
// The structured ones are called as at::cpu::<op>_out: ATen's CPU kernel itself (its shape,
// dtype and broadcast checks included) without a trip through the dispatcher, which for tiny
// tensors is most of an op's cost -- host cost per task 0.44 -> 0.28 us. That is safe here:
// every bound tensor is a dense CPU tensor without autograd state, so the dispatcher would end
// at this same kernel.
#include <c10/util/string_view.h>  // the *_cpu_dispatch.h headers use c10::string_view without including it
#include <ATen/ops/add_cpu_dispatch.h>
#include <ATen/ops/clamp_min_cpu_dispatch.h>
#include <ATen/ops/div_cpu_dispatch.h>
#include <ATen/ops/exp_cpu_dispatch.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/log_cpu_dispatch.h>
#include <ATen/ops/maximum_cpu_dispatch.h>
#include <ATen/ops/minimum_cpu_dispatch.h>
#include <ATen/ops/mul_cpu_dispatch.h>
#include <ATen/ops/neg_cpu_dispatch.h>
#include <ATen/ops/pow_cpu_dispatch.h>
#include <ATen/ops/rsqrt_cpu_dispatch.h>
#include <ATen/ops/sigmoid_cpu_dispatch.h>
#include <ATen/ops/sqrt_cpu_dispatch.h>
#include <ATen/ops/sub_cpu_dispatch.h>
#include <ATen/ops/tanh_cpu_dispatch.h>

#include "devices/cpu/kernel_registry.h"

namespace ge::cpu {

void RegisterElementwiseKernels(CpuKernelRegistry& r) {
  r.RegisterUnary("Identity", [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return y.copy_(x); });
  r.RegisterUnary("Cast", [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return y.copy_(x); });
  r.RegisterUnary("Neg", [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return at::cpu::neg_out(y, x); });
  // clamp_min(x, 0) is relu with NaN propagated, as torch.relu does.
  r.RegisterUnary("Relu",
                  [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return at::cpu::clamp_min_out(y, x, 0); });
  r.RegisterUnary("Sigmoid",
                  [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return at::cpu::sigmoid_out(y, x); });
  r.RegisterUnary("Tanh", [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return at::cpu::tanh_out(y, x); });
  r.RegisterUnary("Exp", [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return at::cpu::exp_out(y, x); });
  r.RegisterUnary("Log", [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return at::cpu::log_out(y, x); });
  r.RegisterUnary("Sqrt", [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return at::cpu::sqrt_out(y, x); });
  r.RegisterUnary("Rsqrt", [](at::Tensor& y, const at::Tensor& x) -> at::Tensor& { return at::cpu::rsqrt_out(y, x); });
  r.Register("Gelu", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    GE_ASSIGN_OR_RETURN(std::string mode, a.Attr<std::string>("approximate"));
    return MakeKernel(a.task, [mode, x = a.inputs[0], y = a.outputs[0]]() mutable { at::gelu_out(y, x, mode); });
  });

  r.RegisterBinary("Add", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& {
    return at::cpu::add_out(y, a, b);
  });
  r.RegisterBinary("Sub", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& {
    return at::cpu::sub_out(y, a, b);
  });
  r.RegisterBinary("Mul", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& {
    return at::cpu::mul_out(y, a, b);
  });
  r.RegisterBinary("RealDiv", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& {
    return at::cpu::div_out(y, a, b);
  });
  r.RegisterBinary("Maximum", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& {
    return at::cpu::maximum_out(y, a, b);
  });
  r.RegisterBinary("Minimum", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& {
    return at::cpu::minimum_out(y, a, b);
  });
  r.RegisterBinary("Pow", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& {
    return at::cpu::pow_out(y, a, b);
  });
}

}  // namespace ge::cpu
