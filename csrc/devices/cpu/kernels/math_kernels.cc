// Matrix products and reductions.
#include <ATen/ops/addmm.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/sum.h>

#include "devices/cpu/kernel_registry.h"
#include "devices/cpu/kernels/epilogue_activations.h"
#include "devices/cpu/kernels/onednn_linear.h"

namespace ge::cpu {
namespace {

// MatMulV2 (no activation: null) and FusedMatMul: oneDNN's inner product with the activation
// as a post-op where that is faster, else at::mm/addmm and the activation in place while y is hot.
Expected<std::unique_ptr<Kernel>> CreateProduct(KernelArgs& a, const CpuEpilogue* activation) {
  GE_ASSIGN_OR_RETURN(bool t1, a.Attr<bool>("transpose_x1"));
  GE_ASSIGN_OR_RETURN(bool t2, a.Attr<bool>("transpose_x2"));
  if (a.inputs.size() > 3 && a.inputs[3].defined())
    return Unimplemented("{} '{}': offset_w (int8) is not supported on CPU", a.task.type, a.task.name);
  void (*apply)(at::Tensor&) = activation ? activation->apply_in_place : [](at::Tensor&) {};
  at::Tensor x1 = t1 ? a.inputs[0].t() : a.inputs[0];
  at::Tensor x2 = t2 ? a.inputs[1].t() : a.inputs[1];
  at::Tensor bias = a.inputs.size() > 2 ? a.inputs[2] : at::Tensor();
  if (!t1)
    if (auto body = OneDnnLinear(x1, x2, bias, a.InputIsConstant(1), activation, a.outputs[0]))
      return MakeKernel(a.task, std::move(*body));
  return MakeKernel(a.task, [x1, x2, bias, apply, y = a.outputs[0]]() mutable {
    if (bias.defined())
      at::addmm_out(y, bias, x1, x2);
    else
      at::mm_out(y, x1, x2);
    apply(y);
  });
}

Expected<std::unique_ptr<Kernel>> CreateMatMulV2(KernelArgs& a) { return CreateProduct(a, nullptr); }

Expected<std::unique_ptr<Kernel>> CreateFusedMatMul(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(std::string name, a.Attr<std::string>("fused_op_type"));
  const std::optional<EpilogueActivation> activation = EpilogueActivationNamed(name);
  const CpuEpilogue* body = activation ? FindCpuEpilogue(*activation) : nullptr;
  if (body == nullptr)
    return InvalidArgument("{} '{}': no CPU kernel for fused_op_type '{}'", a.task.type, a.task.name, name);
  return CreateProduct(a, body);
}

Expected<std::unique_ptr<Kernel>> CreateBatchMatMulV2(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(bool adj1, a.Attr<bool>("adj_x1"));
  GE_ASSIGN_OR_RETURN(bool adj2, a.Attr<bool>("adj_x2"));
  if (a.inputs.size() > 3 && a.inputs[3].defined())
    return Unimplemented("BatchMatMulV2 '{}': offset_w (int8) is not supported on CPU", a.task.name);
  at::Tensor x1 = adj1 ? a.inputs[0].transpose(-1, -2) : a.inputs[0];
  at::Tensor x2 = adj2 ? a.inputs[1].transpose(-1, -2) : a.inputs[1];
  at::Tensor bias = a.inputs[2];
  // Same 3-D batch on both sides: bmm straight into the output; otherwise matmul broadcasts.
  const bool plain_bmm = x1.dim() == 3 && x2.dim() == 3 && x1.size(0) == x2.size(0);
  return MakeKernel(a.task, [x1, x2, bias, plain_bmm, y = a.outputs[0]]() mutable {
    if (plain_bmm)
      at::bmm_out(y, x1, x2);
    else
      at::matmul_out(y, x1, x2);
    if (bias.defined()) y.add_(bias);
  });
}

template <bool kMean>
Expected<std::unique_ptr<Kernel>> CreateReduce(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(bool keep, a.Attr<bool>("keep_dims"));
  // The axes input is a constant (InferShape insists), bound at load like any other value.
  std::vector<int64_t> axes = ConstIntValues(a.inputs[1]);
  if (axes.empty())
    for (int64_t d = 0; d < a.inputs[0].dim(); ++d) axes.push_back(d);
  return MakeKernel(a.task, [axes, keep, x = a.inputs[0], y = a.outputs[0]]() mutable {
    if constexpr (kMean)
      at::mean_out(y, x, axes, keep);
    else
      at::sum_out(y, x, axes, keep);
  });
}

// The offsets are data (how many tokens each expert got), read at every run.
Expected<std::unique_ptr<Kernel>> CreateGroupedMatMul(KernelArgs& a) {
  return MakeKernel(a.task, [x = a.inputs[0], w = a.inputs[1], offsets = a.inputs[2], y = a.outputs[0]]() mutable {
    const at::Tensor ends = offsets.to(at::kLong).contiguous();
    const int64_t* end = ends.data_ptr<int64_t>();
    const int64_t rows = x.size(0);
    int64_t start = 0;
    for (int64_t g = 0; g < ends.numel(); ++g) {
      TORCH_CHECK(end[g] >= start && end[g] <= rows, "group offsets must be non-decreasing and at most ", rows,
                  "; offset ", g, " is ", end[g]);
      if (end[g] > start) {
        at::Tensor out = y.narrow(0, start, end[g] - start);
        at::mm_out(out, x.narrow(0, start, end[g] - start), w[g]);
      }
      start = end[g];
    }
    if (start < rows) y.narrow(0, start, rows - start).zero_();
  });
}

}  // namespace

void RegisterMathKernels(CpuKernelRegistry& r) {
  r.Register("MatMulV2", CreateMatMulV2);
  r.Register("FusedMatMul", CreateFusedMatMul);
  r.Register("BatchMatMulV2", CreateBatchMatMulV2);
  r.Register("GroupedMatMul", CreateGroupedMatMul);
  r.Register("ReduceSum", CreateReduce<false>);
  r.Register("ReduceMean", CreateReduce<true>);
}

}  // namespace ge::cpu
