// Attention kernels: FusedAttention, FusedAttentionWithLse and FusedAttentionGrad, each ATen's
// CPU flash kernel or the engine's blocked one (flash_attention.h), chosen by measurement.
#include <ATen/Parallel.h>
#include <ATen/ops/_scaled_dot_product_flash_attention_for_cpu.h>
#include <ATen/ops/_scaled_dot_product_flash_attention_for_cpu_backward.h>

#include "devices/cpu/kernel_registry.h"
#include "devices/cpu/kernels/flash_attention.h"
#include "devices/cpu/kernels/kernel_choice.h"

namespace ge::cpu {
namespace {

// FusedAttention's operands over [B, H, L, E]: 3-D inputs are [N, L, E] viewed as [N, 1, L, E];
// the mask is expanded to the scores' shape as a view. Every tensor a run touches is prepared at
// load.
struct AttentionOperands {
  at::Tensor q, k, v, y;
  std::optional<at::Tensor> mask;
  std::optional<at::Tensor> lse;  // FusedAttentionWithLse: [B, H, L]
  double scale = 1.0;
  bool causal = false;
};

at::Tensor As4d(const at::Tensor& x) { return x.dim() == 4 ? x : x.unsqueeze(1); }

// Query, key, value, the mask (input 3, expanded to the scores) and the attributes: what the
// attention ops share; y and lse are the caller's.
Expected<AttentionOperands> AttentionInputsOf(const KernelArgs& a) {
  AttentionOperands t{};
  GE_ASSIGN_OR_RETURN(t.scale, a.Attr<double>("scale"));
  GE_ASSIGN_OR_RETURN(t.causal, a.Attr<bool>("is_causal"));
  t.q = As4d(a.inputs[0]);
  t.k = As4d(a.inputs[1]);
  t.v = As4d(a.inputs[2]);
  if (a.inputs.size() > 3 && a.inputs[3].defined()) {
    std::vector<int64_t> scores(a.inputs[0].sizes().begin(), a.inputs[0].sizes().end());
    scores.back() = a.inputs[1].size(-2);
    t.mask = As4d(a.inputs[3].expand(scores));
  }
  return t;
}

Expected<AttentionOperands> AttentionOperandsOf(const KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(AttentionOperands t, AttentionInputsOf(a));
  t.y = As4d(a.outputs[0]);
  if (a.outputs.size() > 1) t.lse = a.outputs[1].dim() == 3 ? a.outputs[1] : a.outputs[1].unsqueeze(1);
  return t;
}

// FusedAttentionGrad's: the forward's operands (y and lse read) and the gradients.
struct AttentionGradOperands {
  AttentionOperands forward;
  at::Tensor dy, dq, dk, dv;
};

Expected<AttentionGradOperands> AttentionGradOperandsOf(const KernelArgs& a) {
  AttentionGradOperands t;
  GE_ASSIGN_OR_RETURN(t.forward, AttentionInputsOf(a));
  t.dy = a.inputs[4];
  t.forward.y = a.inputs[5];
  t.forward.lse = a.inputs[6];
  t.dq = a.outputs[0];
  t.dk = a.outputs[1];
  t.dv = a.outputs[2];
  return t;
}

// ATen's CPU flash attention, the kernel torch itself runs for scaled_dot_product_attention on
// CPU; its output is a tensor of its own, copied into the task's.
std::function<void()> AtenAttention(const AttentionOperands& t) {
  return [t]() mutable {
    auto out = at::_scaled_dot_product_flash_attention_for_cpu(t.q, t.k, t.v, 0.0, t.causal, t.mask, t.scale);
    t.y.copy_(std::get<0>(out));
    if (t.lse) t.lse->copy_(std::get<1>(out));
  };
}

// The blocked kernel's sizes, strides and options for these operands, fixed at load: a run
// fills in only the data pointers (the tensors of inputs and outputs are re-pointed per run).
FlashAttentionArgs FlashShapeOf(const AttentionOperands& t) {
  FlashAttentionArgs shape;
  shape.batch = t.q.size(0);
  shape.q_heads = t.q.size(1);
  shape.kv_heads = t.k.size(1);
  shape.q_len = t.q.size(2);
  shape.kv_len = t.k.size(2);
  shape.head_dim = t.q.size(3);
  for (int d = 0; d < 3; ++d) {
    shape.q_strides[d] = t.q.stride(d);
    shape.k_strides[d] = t.k.stride(d);
    shape.v_strides[d] = t.v.stride(d);
    shape.out_strides[d] = t.y.stride(d);
    if (t.lse) shape.lse_strides[d] = t.lse->stride(d);
  }
  if (t.mask)
    for (int d = 0; d < 4; ++d) shape.mask_strides[d] = t.mask->stride(d);
  shape.scale = static_cast<float>(t.scale);
  shape.causal = t.causal;
  return shape;
}

// The shape flash_attention.h's kernels run these operands with, where they apply: float32,
// every last dim contiguous, a head size they have a body for, query heads a multiple of key heads.
std::optional<FlashAttentionArgs> OwnAttentionShape(const AttentionOperands& t) {
  auto float_rows = [](const at::Tensor& x) {
    return x.scalar_type() == at::kFloat && x.dim() == 4 && x.stride(3) == 1;
  };
  const at::Tensor &q = t.q, &k = t.k, &v = t.v;
  if (!float_rows(q) || !float_rows(k) || !float_rows(v) || !float_rows(t.y) || !FlashAttentionApplies(q.size(3)))
    return std::nullopt;
  if (k.size(3) != q.size(3) || v.size(3) != q.size(3) || k.size(0) != q.size(0) || v.size(0) != q.size(0) ||
      k.sizes() != v.sizes() || q.size(1) % k.size(1) != 0 || t.y.sizes() != q.sizes())
    return std::nullopt;
  if (t.mask && (t.mask->scalar_type() != at::kFloat || t.mask->dim() != 4)) return std::nullopt;
  if (t.lse && (t.lse->scalar_type() != at::kFloat || t.lse->dim() != 3)) return std::nullopt;
  return FlashShapeOf(t);
}

// A run of `kernel` (one of flash_attention.h's) on the task's tensors, writing its output in place.
std::function<void()> OwnAttention(const AttentionOperands& t, const FlashAttentionArgs& shape,
                                   void (*kernel)(const FlashAttentionArgs&)) {
  return [t, shape, kernel]() {
    FlashAttentionArgs f = shape;
    f.q = t.q.const_data_ptr<float>();
    f.k = t.k.const_data_ptr<float>();
    f.v = t.v.const_data_ptr<float>();
    f.out = t.y.data_ptr<float>();
    if (t.mask) f.mask = t.mask->const_data_ptr<float>();
    if (t.lse) f.lse = t.lse->data_ptr<float>();
    kernel(f);
  };
}

// ATen's flash backward (eager's); its gradients are tensors of its own, copied into the task's.
std::function<void()> AtenAttentionGrad(const AttentionGradOperands& t) {
  return [t]() mutable {
    const AttentionOperands& f = t.forward;
    auto grads = at::_scaled_dot_product_flash_attention_for_cpu_backward(t.dy, f.q, f.k, f.v, f.y, *f.lse, 0.0,
                                                                          f.causal, f.mask, f.scale);
    t.dq.copy_(std::get<0>(grads));
    t.dk.copy_(std::get<1>(grads));
    t.dv.copy_(std::get<2>(grads));
  };
}

// flash_attention.h's backward, writing the gradients in place, where the forward's kernel
// would apply and every tensor's rows are contiguous.
std::optional<std::function<void()>> OwnAttentionGrad(const AttentionGradOperands& t) {
  const AttentionOperands& f = t.forward;
  auto same_rows = [](const at::Tensor& x, const at::Tensor& like) {
    return x.scalar_type() == at::kFloat && x.sizes() == like.sizes() && x.stride(3) == 1;
  };
  if (!OwnAttentionShape(f) || !same_rows(t.dy, f.q) || !same_rows(t.dq, f.q) || !same_rows(t.dk, f.k) ||
      !same_rows(t.dv, f.v))
    return std::nullopt;
  FlashAttentionGradArgs shape;
  shape.forward = FlashShapeOf(f);
  for (int d = 0; d < 3; ++d) {
    shape.grad_out_strides[d] = t.dy.stride(d);
    shape.grad_q_strides[d] = t.dq.stride(d);
    shape.grad_k_strides[d] = t.dk.stride(d);
    shape.grad_v_strides[d] = t.dv.stride(d);
  }
  return [t, shape]() {
    FlashAttentionGradArgs g = shape;
    const AttentionOperands& f = t.forward;
    g.forward.q = f.q.const_data_ptr<float>();
    g.forward.k = f.k.const_data_ptr<float>();
    g.forward.v = f.v.const_data_ptr<float>();
    g.forward.out = const_cast<float*>(f.y.const_data_ptr<float>());  // read only
    if (f.mask) g.forward.mask = f.mask->const_data_ptr<float>();
    g.forward.lse = const_cast<float*>(f.lse->const_data_ptr<float>());  // read only
    g.grad_out = t.dy.const_data_ptr<float>();
    g.grad_q = t.dq.data_ptr<float>();
    g.grad_k = t.dk.data_ptr<float>();
    g.grad_v = t.dv.data_ptr<float>();
    FlashAttentionBackward(g);
  };
}

std::vector<KernelCandidate> AttentionGradCandidates(const AttentionGradOperands& t) {
  std::vector<KernelCandidate> out{{"aten_flash", AtenAttentionGrad(t)}};
  if (auto own = OwnAttentionGrad(t)) out.push_back({"blocked_flash", std::move(*own)});
  return out;
}

std::vector<KernelCandidate> AttentionCandidates(const AttentionOperands& t) {
  std::vector<KernelCandidate> out{{"aten_flash", AtenAttention(t)}};
  const std::optional<FlashAttentionArgs> shape = OwnAttentionShape(t);
  if (!shape) return out;
  out.push_back({"blocked_flash", OwnAttention(t, *shape, FlashAttention)});
  if (DecodeAttentionApplies(*shape))
    out.push_back({"decode_flash", OwnAttention(t, *shape, [](const FlashAttentionArgs& f) { DecodeAttention(f); })});
  return out;
}

// Names the op (the forward, with or without its log-sum-exp, or the backward), the shapes and
// options that decide which attention kernel is faster.
std::string AttentionKey(const KernelArgs& a, const AttentionOperands& t) {
  auto dim = [&a](int64_t size) { return SizeInKey(size, a.sizes_vary); };
  return fmt::format("{} {} b={} h={}/{} q={} kv={} e={}{}{} threads={}", a.task.type, c10::toString(t.q.scalar_type()),
                     t.q.size(0), t.q.size(1), t.k.size(1), dim(t.q.size(2)), dim(t.k.size(2)), t.q.size(3),
                     t.causal ? " causal" : "", t.mask ? " +mask" : "", at::get_num_threads());
}

const AttentionOperands& ForwardOf(const AttentionOperands& t) { return t; }
const AttentionOperands& ForwardOf(const AttentionGradOperands& t) { return t.forward; }

// ATen's kernel, the blocked one or (a forward with few query rows per key/value head) the
// decode one (flash_attention.h), whichever measured faster for these shapes on this CPU (or the
// one TORCHAIR_GE_CPU_ATTENTION forces; where it does not apply -- decode_flash to a backward, or
// to many query rows -- ATen's runs): the forward's and the backward's choice alike.
template <class Operands>
Expected<std::unique_ptr<Kernel>> ChosenAttentionKernel(
    KernelArgs& a, Expected<Operands> (*operands_of)(const KernelArgs&),
    std::vector<KernelCandidate> (*candidates_of)(const Operands&)) {
  GE_ASSIGN_OR_RETURN(const Operands t, operands_of(a));
  GE_ASSIGN_OR_RETURN(const std::string setting, ForcedKernelSetting("TORCHAIR_GE_CPU_ATTENTION",
                                                                     {"aten_flash", "blocked_flash", "decode_flash"}));
  if (setting != "measure") return MakeKernel(a.task, CandidateNamed(candidates_of(t), setting));
  auto timed = [&]() {
    Expected<Operands> scratch = operands_of(a.WithTimingOperands());
    return scratch.ok() ? candidates_of(*scratch) : std::vector<KernelCandidate>();
  };
  return MakeKernel(a.task, FastestByMeasurement(AttentionKey(a, ForwardOf(t)), candidates_of(t), timed));
}

Expected<std::unique_ptr<Kernel>> CreateFusedAttention(KernelArgs& a) {
  return ChosenAttentionKernel<AttentionOperands>(a, AttentionOperandsOf, AttentionCandidates);
}

Expected<std::unique_ptr<Kernel>> CreateFusedAttentionGrad(KernelArgs& a) {
  return ChosenAttentionKernel<AttentionGradOperands>(a, AttentionGradOperandsOf, AttentionGradCandidates);
}

}  // namespace

void RegisterAttentionKernels(CpuKernelRegistry& r) {
  r.Register("FusedAttention", CreateFusedAttention);
  r.Register("FusedAttentionWithLse", CreateFusedAttention);
  r.Register("FusedAttentionGrad", CreateFusedAttentionGrad);
}

}  // namespace ge::cpu
