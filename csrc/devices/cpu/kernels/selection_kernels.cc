// Kernels of selection_ops.cc.
#include <algorithm>

#include <ATen/ops/all.h>
#include <ATen/ops/any.h>
#include <ATen/ops/batch_norm_update_stats.h>
#include <ATen/ops/bitwise_and.h>
#include <ATen/ops/bitwise_or.h>
#include <ATen/ops/bitwise_xor.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/logsumexp.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/native_group_norm.h>
#include <ATen/ops/scatter.h>
#include <ATen/ops/scatter_add.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/std.h>
#include <ATen/ops/topk.h>
#include <ATen/ops/var.h>

#include "devices/cpu/kernel_registry.h"

namespace ge::cpu {
namespace {

at::Tensor& AndOut(at::Tensor& y, const at::Tensor& a, const at::Tensor& b) { return at::bitwise_and_out(y, a, b); }
at::Tensor& OrOut(at::Tensor& y, const at::Tensor& a, const at::Tensor& b) { return at::bitwise_or_out(y, a, b); }
at::Tensor& XorOut(at::Tensor& y, const at::Tensor& a, const at::Tensor& b) { return at::bitwise_xor_out(y, a, b); }

std::vector<int64_t> Axes(const KernelArgs& a) {
  std::vector<int64_t> axes = ConstIntValues(a.inputs[1]);
  if (axes.empty())
    for (int64_t d = 0; d < a.inputs[0].dim(); ++d) axes.push_back(d);
  return axes;
}

enum class Reduction { kAny, kAll, kLogSumExp, kVar, kStd };

// Whether `axes` are every dim but 1 of `x` (per-channel statistics, as batch norm in training
// mode takes them) and ATen's batch-norm statistics kernel computes them in x's own dtype.
bool IsChannelStatistics(const at::Tensor& x, std::vector<int64_t> axes, double correction) {
  if (x.dim() < 2 || (x.scalar_type() != at::kFloat && x.scalar_type() != at::kDouble)) return false;
  for (int64_t& d : axes) d = d < 0 ? d + x.dim() : d;
  std::sort(axes.begin(), axes.end());
  std::vector<int64_t> others;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != 1) others.push_back(d);
  return axes == others && static_cast<double>(x.numel() / x.size(1)) > correction;
}

// The variance over every dim but 1 through ATen's batch-norm statistics: one vectorised pass
// per channel, 3-4x faster than at::var over non-trailing dims (8x64x56x56 on an AMD EPYC: 1.3
// vs 4.5 ms). It gives the biased variance; the correction rescales it.
void ChannelVariance(at::Tensor& y, const at::Tensor& x, double correction) {
  const auto [mean, var] = at::batch_norm_update_stats(x, std::nullopt, std::nullopt, 0.0);
  const double n = static_cast<double>(x.numel() / x.size(1));
  at::Tensor out = y.view({x.size(1)});
  if (correction == 0)
    out.copy_(var);
  else
    at::mul_out(out, var, at::Scalar(n / (n - correction)));
}

template <Reduction R>
Expected<std::unique_ptr<Kernel>> CreateReduce(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(bool keep, a.Attr<bool>("keep_dims"));
  double correction = 0;
  if constexpr (R == Reduction::kVar || R == Reduction::kStd) {
    GE_ASSIGN_OR_RETURN(correction, a.Attr<double>("correction"));
  }
  std::vector<int64_t> axes = Axes(a);
  if constexpr (R == Reduction::kVar) {
    if (IsChannelStatistics(a.inputs[0], axes, correction))
      return MakeKernel(
          a.task, [correction, x = a.inputs[0], y = a.outputs[0]]() mutable { ChannelVariance(y, x, correction); });
  }
  return MakeKernel(a.task, [axes, keep, correction, x = a.inputs[0], y = a.outputs[0]]() mutable {
    if constexpr (R == Reduction::kAny)
      at::any_out(y, x, at::IntArrayRef(axes), keep);
    else if constexpr (R == Reduction::kAll)
      at::all_out(y, x, at::IntArrayRef(axes), keep);
    else if constexpr (R == Reduction::kLogSumExp)
      at::logsumexp_out(y, x, axes, keep);
    else if constexpr (R == Reduction::kVar)
      at::var_out(y, x, at::OptionalIntArrayRef(axes), at::Scalar(correction), keep);
    else
      at::std_out(y, x, at::OptionalIntArrayRef(axes), at::Scalar(correction), keep);
  });
}

Expected<std::unique_ptr<Kernel>> CreateScatterElements(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(int64_t axis, a.Attr<int64_t>("axis"));
  GE_ASSIGN_OR_RETURN(std::string reduction, a.Attr<std::string>("reduction"));
  const bool add = reduction == "add";
  return MakeKernel(a.task,
                    [axis, add, data = a.inputs[0], idx = a.inputs[1], upd = a.inputs[2], y = a.outputs[0]]() mutable {
                      if (add)
                        at::scatter_add_out(y, data, axis, idx, upd);
                      else
                        at::scatter_out(y, data, axis, idx, upd);
                    });
}

Expected<std::unique_ptr<Kernel>> CreateGroupNorm(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(int64_t groups, a.Attr<int64_t>("num_groups"));
  GE_ASSIGN_OR_RETURN(double eps, a.Attr<double>("eps"));
  const at::Tensor& x = a.inputs[0];
  const int64_t n = x.size(0), c = x.size(1);
  const int64_t hw = n * c == 0 ? 0 : x.numel() / (n * c);  // empty batches: no division by zero
  std::optional<at::Tensor> gamma, beta;
  if (a.inputs[1].defined()) gamma = a.inputs[1];
  if (a.inputs[2].defined()) beta = a.inputs[2];
  return MakeKernel(a.task, [=, y = a.outputs[0], mean = a.outputs[1], rstd = a.outputs[2]]() mutable {
    at::native_group_norm_out(y, mean, rstd, x, gamma, beta, n, c, hw, groups, eps);
  });
}

}  // namespace

void RegisterSelectionKernels(CpuKernelRegistry& r) {
  r.Register("GatherElements", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    GE_ASSIGN_OR_RETURN(int64_t dim, a.Attr<int64_t>("dim"));
    return MakeKernel(a.task, [dim, x = a.inputs[0], idx = a.inputs[1], y = a.outputs[0]]() mutable {
      at::gather_out(y, x, dim, idx);
    });
  });
  r.Register("ScatterElements", CreateScatterElements);
  r.Register("TopKV2", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    GE_ASSIGN_OR_RETURN(int64_t dim, a.Attr<int64_t>("dim"));
    GE_ASSIGN_OR_RETURN(bool largest, a.Attr<bool>("largest"));
    GE_ASSIGN_OR_RETURN(bool sorted, a.Attr<bool>("sorted"));
    const int64_t k = ConstIntValues(a.inputs[1]).at(0);
    return MakeKernel(a.task, [=, x = a.inputs[0], values = a.outputs[0], indices = a.outputs[1]]() mutable {
      at::topk_out(values, indices, x, k, dim, largest, sorted);
    });
  });
  r.Register("Sort", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    GE_ASSIGN_OR_RETURN(int64_t axis, a.Attr<int64_t>("axis"));
    GE_ASSIGN_OR_RETURN(bool descending, a.Attr<bool>("descending"));
    GE_ASSIGN_OR_RETURN(bool stable, a.Attr<bool>("stable"));
    return MakeKernel(a.task, [=, x = a.inputs[0], values = a.outputs[0], indices = a.outputs[1]]() mutable {
      at::sort_out(values, indices, x, stable, axis, descending);
    });
  });
  r.RegisterBinary("BitwiseAnd", AndOut);
  r.RegisterBinary("BitwiseOr", OrOut);
  r.RegisterBinary("BitwiseXor", XorOut);
  r.Register("ReduceAny", CreateReduce<Reduction::kAny>);
  r.Register("ReduceAll", CreateReduce<Reduction::kAll>);
  r.Register("ReduceLogSumExp", CreateReduce<Reduction::kLogSumExp>);
  r.Register("ReduceVar", CreateReduce<Reduction::kVar>);
  r.Register("ReduceStd", CreateReduce<Reduction::kStd>);
  r.Register("GroupNorm", CreateGroupNorm);
}

}  // namespace ge::cpu
