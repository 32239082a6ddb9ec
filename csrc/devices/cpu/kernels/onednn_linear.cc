// y = x1 · x2 (+ bias) in float32 through oneDNN's inner product (ATen's
// mkldnn::_linear_pointwise) instead of at::mm/addmm.
//
// Why: ATen's float32 mm goes to MKL's sgemm, which on AMD CPUs runs its AVX2 code path;
// oneDNN's JIT kernels use AVX-512 wherever the CPU has it. On the 2-core bench machine
// (AMD EPYC, AVX-512) oneDNN measured 2.0-2.5x faster from 64x512x512 up (bert's and llama's
// projections) and ~3x on a decode step's matrix-vector products, but it costs ~12 us per call
// in primitive look-up and an output it allocates, which loses on small products; on an Intel
// Xeon MKL keeps up. Which one runs is decided per shape by measurement (kernel_choice.h,
// math_kernels.cc); both give eager-level float32 numerics (no reduced-precision math mode).
//
// A constant weight (frozen parameters, folded constants) is reordered once, at load, into
// oneDNN's blocked layout for the task's row count: a further ~10% per call.
#include "devices/cpu/kernels/onednn_linear.h"

#include "devices/cpu/kernels/onednn_ops.h"

namespace ge::cpu {
namespace {

using LinearFn = at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, std::string_view,
                            c10::List<std::optional<at::Scalar>>, std::optional<std::string_view>);
using ReorderFn = at::Tensor(const at::Tensor&, std::optional<int64_t>);

// Without them (FindOneDnnOp) every MatMulV2 stays on at::mm.
const std::optional<c10::TypedOperatorHandle<LinearFn>>& LinearOp() {
  static const auto op = FindOneDnnOp<LinearFn>("mkldnn::_linear_pointwise");
  return op;
}

const std::optional<c10::TypedOperatorHandle<ReorderFn>>& ReorderOp() {
  static const auto op = FindOneDnnOp<ReorderFn>("mkldnn::_reorder_linear_weight");
  return op;
}

}  // namespace

std::optional<std::function<void()>> OneDnnLinear(const at::Tensor& x1, const at::Tensor& x2, const at::Tensor& bias,
                                                  bool x2_is_constant, const CpuEpilogue* activation,
                                                  const at::Tensor& y) {
  if (!LinearOp()) return std::nullopt;
  const bool f32 = x1.scalar_type() == at::kFloat && x2.scalar_type() == at::kFloat && y.scalar_type() == at::kFloat;
  if (!f32 || x1.dim() != 2 || x2.dim() != 2 || !x1.is_contiguous()) return std::nullopt;
  const int64_t m = x1.size(0), n = x2.size(1);
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != n || bias.scalar_type() != at::kFloat)) return std::nullopt;

  // oneDNN takes the weight as [n, k] (nn.Linear's layout) with any strides.
  at::Tensor weight = x2.t();
  if (x2_is_constant && ReorderOp()) weight = ReorderOp()->call(weight.contiguous(), m);
  std::optional<at::Tensor> b = bias.defined() ? std::optional<at::Tensor>(bias) : std::nullopt;
  // oneDNN's post-op names: GELU's form is the algorithm argument.
  const std::string post_op = activation ? activation->onednn_post_op : "none";
  std::optional<std::string> algorithm;
  if (activation && activation->onednn_algorithm) algorithm = activation->onednn_algorithm;
  // Everything the call takes is made here, once: a launch only calls and copies the result in
  // (the operator allocates its output; it has no out= form).
  const c10::List<std::optional<at::Scalar>> no_scalars;
  return [op = *LinearOp(), x1, weight, b, post_op, algorithm, no_scalars, y]() mutable {
    const std::optional<std::string_view> algo = algorithm ? std::optional<std::string_view>(*algorithm) : std::nullopt;
    y.copy_(op.call(x1, weight, b, post_op, no_scalars, algo));
  };
}

}  // namespace ge::cpu
