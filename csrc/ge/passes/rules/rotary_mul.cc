// Built-in rewrite rule "RotaryMul": the rotary position embedding LLaMA-style models write out,
//     Add(Mul(x, cos), Mul(ConcatV2(Neg(x[..., h:]), x[..., :h], axis=-1), sin))
// (rotate_half with h half of x's last dim; the slices StridedSliceV2s of x; either operand order
// of the Muls and the Add), becomes one RotaryMul(x, cos, sin): GE's and torch_npu's op for it,
// one pass over x where the pieces were two slice copies, a negation and a kernel reading them
// (HF LLaMA at [2, 128]: ~5% of the forward, twice per layer). Every intermediate must have exactly
// one user; x may have others. cos and sin broadcast to x's shape, as the Add's output has it.
#include <algorithm>
#include <optional>
#include <utility>

#include "ge/ops/infer_util.h"
#include "ge/ops/op_names.h"
#include "ge/ops/rewrite_utils.h"
#include "ge/passes/rewrite_rules.h"

namespace ge {
namespace {

struct RotaryMatch {
  Value x, cos, sin;
};

// Whether `v` is x[..., begin:end] over x's last axis, step 1 (negative bounds counted from the
// end, an end past the dim clipped to it); sets `x`.
bool IsLastAxisSlice(Value v, int64_t begin, int64_t end, Value* x) {
  const Node* slice = v.node;
  if (slice->type() != kOpStridedSliceV2 || slice->num_inputs() != 5 || !IsInnerLink(v)) return false;
  const Shape& in = ShapeOf(slice->input(0));
  if (in.empty()) return false;
  const auto rank = static_cast<int64_t>(in.size()), dim = in.back();
  const auto b = ConstInts(slice->input(1)), e = ConstInts(slice->input(2)), axes = ConstInts(slice->input(3)),
             steps = ConstInts(slice->input(4));
  if (!b || !e || !axes || !steps || b->size() != 1 || e->size() != 1 || axes->size() != 1 || steps->size() != 1)
    return false;
  if (((*axes)[0] != -1 && (*axes)[0] != rank - 1) || (*steps)[0] != 1) return false;
  auto position = [dim](int64_t i) { return std::min(i < 0 ? i + dim : i, dim); };
  if (position((*b)[0]) != begin || position((*e)[0]) != end) return false;
  *x = slice->input(0);
  return true;
}

// rotate_half(x) = ConcatV2(Neg(x[..., h:]), x[..., :h]) along the last axis; returns x.
std::optional<Value> RotatedHalves(Value v) {
  const Node* concat = v.node;
  if (concat->type() != kOpConcatV2 || concat->num_inputs() != 3 || !IsInnerLink(v)) return std::nullopt;
  const Shape& out = ShapeOf(v);
  const auto axis = ConstInts(concat->input(2));
  const auto rank = static_cast<int64_t>(out.size());
  if (rank == 0 || !axis || axis->size() != 1 || ((*axis)[0] != -1 && (*axis)[0] != rank - 1)) return std::nullopt;
  const int64_t dim = out.back(), h = dim / 2;
  if (dim % 2 != 0 || h == 0) return std::nullopt;
  const Value negated = concat->input(0);
  if (negated.node->type() != kOpNeg || !IsInnerLink(negated)) return std::nullopt;
  Value upper, lower;
  if (!IsLastAxisSlice(negated.node->input(0), h, dim, &upper) || !IsLastAxisSlice(concat->input(1), 0, h, &lower) ||
      upper != lower || ShapeOf(upper) != out)
    return std::nullopt;
  return upper;
}

// (x, r) where `v` is Mul(rotate_half(x), r), the factors either way round.
std::optional<std::pair<Value, Value>> RotatedTimes(Value v) {
  if (v.node->type() != kOpMul || v.node->num_inputs() != 2 || !IsInnerLink(v)) return std::nullopt;
  for (int side = 0; side < 2; ++side)
    if (const std::optional<Value> x = RotatedHalves(v.node->input(side)))
      return std::make_pair(*x, v.node->input(1 - side));
  return std::nullopt;
}

// r where `v` is Mul(x, r), the factors either way round.
std::optional<Value> Times(Value v, Value x) {
  if (v.node->type() != kOpMul || v.node->num_inputs() != 2 || !IsInnerLink(v)) return std::nullopt;
  for (int side = 0; side < 2; ++side)
    if (v.node->input(side) == x) return v.node->input(1 - side);
  return std::nullopt;
}

std::optional<RotaryMatch> Match(const Node& root) {
  if (root.type() != kOpAdd || root.num_inputs() != 2 || HasControlEdges(&root)) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const auto rotated = RotatedTimes(root.input(side));
    if (!rotated) continue;
    const std::optional<Value> cos = Times(root.input(1 - side), rotated->first);
    if (!cos) continue;
    const RotaryMatch m{rotated->first, *cos, rotated->second};
    const TensorDesc& x = m.x.node->output_desc(m.x.index);
    const TensorDesc &c = m.cos.node->output_desc(m.cos.index), &s = m.sin.node->output_desc(m.sin.index);
    if (root.output_desc(0).shape != x.shape || c.dtype != x.dtype || s.dtype != x.dtype) continue;
    auto bc = BroadcastShapes(c.shape, x.shape), bs = BroadcastShapes(s.shape, x.shape);
    if (!bc.ok() || *bc != x.shape || !bs.ok() || *bs != x.shape) continue;
    return m;
  }
  return std::nullopt;
}

Status Apply(Graph& graph, Node* root) {
  const auto m = Match(*root);
  GE_CHECK(m.has_value(), "{} no longer matches", root->ToString());
  Node* rotary = graph.AddNode(kOpRotaryMul, root->name() + "_rotary", {m->x, m->cos, m->sin}, 1);
  GE_RETURN_IF_ERROR(SubstituteNode(graph, root, rotary));
  return RemoveWithDeadInputs(graph, root);
}

}  // namespace

void RegisterRotaryMulRule(RewriteRuleRegistry& registry) {
  (void)registry.Register(
      RewriteRule{"RotaryMul", {kOpAdd}, [](const Node& root) { return Match(root).has_value(); }, Apply});
}

}  // namespace ge
