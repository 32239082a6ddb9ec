// Kernels of math_extra_ops.cc: elementwise math, parametrized activations, clipping,
// floor division, extra reductions, log-softmax and cumsum.
#include <ATen/ops/_log_softmax.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/amin.h>
#include <ATen/ops/argmax.h>
#include <ATen/ops/argmin.h>
#include <ATen/ops/atan.h>
#include <ATen/ops/ceil.h>
#include <ATen/ops/clamp.h>
#include <ATen/ops/cos.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/elu.h>
#include <ATen/ops/erf.h>
#include <ATen/ops/expm1.h>
#include <ATen/ops/floor.h>
#include <ATen/ops/floor_divide.h>
#include <ATen/ops/hardsigmoid.h>
#include <ATen/ops/hardswish.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/leaky_relu.h>
#include <ATen/ops/log1p.h>
#include <ATen/ops/log2.h>
#include <ATen/ops/mish.h>
#include <ATen/ops/prod.h>
#include <ATen/ops/reciprocal.h>
#include <ATen/ops/remainder.h>
#include <ATen/ops/round.h>
#include <ATen/ops/sign.h>
#include <ATen/ops/sin.h>
#include <ATen/ops/softplus.h>
#include <ATen/ops/tan.h>
#include <ATen/ops/trunc.h>

#include "devices/cpu/kernel_registry.h"

namespace ge::cpu {
namespace {

// ATen's out-variants have extra parameters; these adapt them to the plain unary form.
at::Tensor& AbsOut(at::Tensor& y, const at::Tensor& x) { return at::abs_out(y, x); }
at::Tensor& SignOut(at::Tensor& y, const at::Tensor& x) { return at::sign_out(y, x); }
at::Tensor& FloorOut(at::Tensor& y, const at::Tensor& x) { return at::floor_out(y, x); }
at::Tensor& CeilOut(at::Tensor& y, const at::Tensor& x) { return at::ceil_out(y, x); }
at::Tensor& RoundOut(at::Tensor& y, const at::Tensor& x) { return at::round_out(y, x); }
at::Tensor& TruncOut(at::Tensor& y, const at::Tensor& x) { return at::trunc_out(y, x); }
at::Tensor& ReciprocalOut(at::Tensor& y, const at::Tensor& x) { return at::reciprocal_out(y, x); }
at::Tensor& Expm1Out(at::Tensor& y, const at::Tensor& x) { return at::expm1_out(y, x); }
at::Tensor& Log1pOut(at::Tensor& y, const at::Tensor& x) { return at::log1p_out(y, x); }
at::Tensor& Log2Out(at::Tensor& y, const at::Tensor& x) { return at::log2_out(y, x); }
at::Tensor& SinOut(at::Tensor& y, const at::Tensor& x) { return at::sin_out(y, x); }
at::Tensor& CosOut(at::Tensor& y, const at::Tensor& x) { return at::cos_out(y, x); }
at::Tensor& TanOut(at::Tensor& y, const at::Tensor& x) { return at::tan_out(y, x); }
at::Tensor& AtanOut(at::Tensor& y, const at::Tensor& x) { return at::atan_out(y, x); }
at::Tensor& ErfOut(at::Tensor& y, const at::Tensor& x) { return at::erf_out(y, x); }
at::Tensor& HardSigmoidOut(at::Tensor& y, const at::Tensor& x) { return at::hardsigmoid_out(y, x); }
at::Tensor& HardSwishOut(at::Tensor& y, const at::Tensor& x) { return at::hardswish_out(y, x); }
at::Tensor& MishOut(at::Tensor& y, const at::Tensor& x) { return at::mish_out(y, x); }
at::Tensor& FloorDivOut(at::Tensor& y, const at::Tensor& a, const at::Tensor& b) {
  return at::floor_divide_out(y, a, b);
}
at::Tensor& FloorModOut(at::Tensor& y, const at::Tensor& a, const at::Tensor& b) { return at::remainder_out(y, a, b); }

std::vector<int64_t> AllDims(const at::Tensor& x, std::vector<int64_t> axes) {
  if (axes.empty())
    for (int64_t d = 0; d < x.dim(); ++d) axes.push_back(d);
  return axes;
}

template <bool kMax>
Expected<std::unique_ptr<Kernel>> CreateReduceExtreme(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(bool keep, a.Attr<bool>("keep_dims"));
  const auto axes = AllDims(a.inputs[0], ConstIntValues(a.inputs[1]));
  return MakeKernel(a.task, [axes, keep, x = a.inputs[0], y = a.outputs[0]]() mutable {
    if constexpr (kMax)
      at::amax_out(y, x, axes, keep);
    else
      at::amin_out(y, x, axes, keep);
  });
}

Expected<std::unique_ptr<Kernel>> CreateReduceProd(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(bool keep, a.Attr<bool>("keep_dims"));
  const at::Tensor& x = a.inputs[0];
  const auto axes = ConstIntValues(a.inputs[1]);
  if (axes.size() == 1 || x.dim() <= 1)
    return MakeKernel(a.task, [dim = axes.empty() ? 0 : axes[0], keep, x, y = a.outputs[0]]() mutable {
      at::prod_out(y, x.dim() == 0 ? x.reshape({1}) : x, dim, keep);
    });
  if (!axes.empty() && static_cast<int64_t>(axes.size()) != x.dim())
    return Unimplemented("ReduceProd '{}': a product over {} of {} axes is not supported", a.task.name, axes.size(),
                         x.dim());
  // Every axis: the product of the flattened tensor into the one-element output.
  return MakeKernel(
      a.task, [flat = x.reshape({-1}), y = a.outputs[0].view({1})]() mutable { at::prod_out(y, flat, 0, false); });
}

template <bool kMax>
Expected<std::unique_ptr<Kernel>> CreateArgReduce(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(bool keep, a.Attr<bool>("keep_dims"));
  const int64_t dim = ConstIntValues(a.inputs[1]).at(0);
  return MakeKernel(a.task, [dim, keep, x = a.inputs[0], y = a.outputs[0]]() mutable {
    if constexpr (kMax)
      at::argmax_out(y, x, dim, keep);
    else
      at::argmin_out(y, x, dim, keep);
  });
}

}  // namespace

void RegisterMathExtraKernels(CpuKernelRegistry& r) {
  r.RegisterUnary("Abs", AbsOut);
  r.RegisterUnary("Sign", SignOut);
  r.RegisterUnary("Floor", FloorOut);
  r.RegisterUnary("Ceil", CeilOut);
  r.RegisterUnary("Round", RoundOut);
  r.RegisterUnary("Trunc", TruncOut);
  r.RegisterUnary("Reciprocal", ReciprocalOut);
  r.RegisterUnary("Expm1", Expm1Out);
  r.RegisterUnary("Log1p", Log1pOut);
  r.RegisterUnary("Log2", Log2Out);
  r.RegisterUnary("Sin", SinOut);
  r.RegisterUnary("Cos", CosOut);
  r.RegisterUnary("Tan", TanOut);
  r.RegisterUnary("Atan", AtanOut);
  r.RegisterUnary("Erf", ErfOut);
  r.RegisterUnary("HardSigmoid", HardSigmoidOut);
  r.RegisterUnary("HardSwish", HardSwishOut);
  r.RegisterUnary("Mish", MishOut);
  r.RegisterBinary("FloorDiv", FloorDivOut);
  r.RegisterBinary("FloorMod", FloorModOut);
  r.Register("LeakyRelu", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    GE_ASSIGN_OR_RETURN(double slope, a.Attr<double>("negative_slope"));
    return MakeKernel(a.task,
                      [slope, x = a.inputs[0], y = a.outputs[0]]() mutable { at::leaky_relu_out(y, x, slope); });
  });
  r.Register("Swish", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    GE_ASSIGN_OR_RETURN(double scale, a.Attr<double>("scale"));
    if (scale == 1.0) return MakeKernel(a.task, [x = a.inputs[0], y = a.outputs[0]]() mutable { at::silu_out(y, x); });
    return MakeKernel(a.task, [scale, x = a.inputs[0], y = a.outputs[0]]() mutable {
      y.copy_(x).mul_(scale).sigmoid_();
      y.mul_(x);
    });
  });
  r.Register("Elu", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    GE_ASSIGN_OR_RETURN(double alpha, a.Attr<double>("alpha"));
    GE_ASSIGN_OR_RETURN(double scale, a.Attr<double>("scale"));
    GE_ASSIGN_OR_RETURN(double input_scale, a.Attr<double>("input_scale"));
    return MakeKernel(
        a.task, [=, x = a.inputs[0], y = a.outputs[0]]() mutable { at::elu_out(y, x, alpha, scale, input_scale); });
  });
  r.Register("Softplus", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    GE_ASSIGN_OR_RETURN(double beta, a.Attr<double>("beta"));
    GE_ASSIGN_OR_RETURN(double threshold, a.Attr<double>("threshold"));
    return MakeKernel(a.task,
                      [=, x = a.inputs[0], y = a.outputs[0]]() mutable { at::softplus_out(y, x, beta, threshold); });
  });
  r.Register("ClipByValue", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    return MakeKernel(a.task, [x = a.inputs[0], lo = a.inputs[1], hi = a.inputs[2], y = a.outputs[0]]() mutable {
      at::clamp_out(y, x, lo, hi);
    });
  });
  r.Register("ReduceMax", CreateReduceExtreme<true>);
  r.Register("ReduceMin", CreateReduceExtreme<false>);
  r.Register("ReduceProd", CreateReduceProd);
  r.Register("ArgMaxV2", CreateArgReduce<true>);
  r.Register("ArgMin", CreateArgReduce<false>);
  r.Register("LogSoftmaxV2", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    GE_ASSIGN_OR_RETURN(std::vector<int64_t> axes, a.Attr<std::vector<int64_t>>("axes"));
    return MakeKernel(a.task, [dim = axes[0], x = a.inputs[0], y = a.outputs[0]]() mutable {
      at::_log_softmax_out(y, x, dim, false);
    });
  });
  r.Register("Cumsum", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    GE_ASSIGN_OR_RETURN(int64_t axis, a.Attr<int64_t>("axis"));
    return MakeKernel(a.task, [axis, x = a.inputs[0], y = a.outputs[0]]() mutable { at::cumsum_out(y, x, axis); });
  });
}

}  // namespace ge::cpu
