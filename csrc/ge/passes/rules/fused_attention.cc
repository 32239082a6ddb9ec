// Built-in rewrite rule "FusedAttention": the attention block that scaled_dot_product_attention
// and hand-written attention convert to,
//     BatchMatMulV2(SoftmaxV2(Add(Mul(BatchMatMulV2(q, k, adj_x2), scale), mask), axes=[-1]), v)
// (the Add and the Mul optional, RealDiv by a constant instead of Mul accepted; SafeSoftmax, the
// converter's, in place of SoftmaxV2: the kernels give 0 for a row that sees no key), becomes one
// FusedAttention(q, k, v, mask) node: the same math, computed by a flash-attention kernel
// without materializing the scores. A causal SDPA's mask, MaskedFill(scores, j > i, -inf) on the
// scaled scores (the converter's, its condition folded to a constant), becomes is_causal: the
// kernel then skips the blocks above the diagonal, as eager's does (a 512-token GQA prefill ran
// its scores materialized, 1.34x eager's flash kernel). Every intermediate must have exactly one
// user, but for the scores the softmax reads in a training forward: the converter also takes
// their log-sum-exp (ReduceLogSumExp over the last axis) for the backward, and the two become one
// FusedAttentionWithLse, the flash kernel giving each row's log-sum-exp beside the output. Grouped-query attention's
// key/value heads, repeated for their query heads by the converter (Reshape -> BroadcastTo -> Reshape), are read
// unrepeated: no copy of the KV cache per step.
//
// Hand-written attention on [B, H, S, D] tensors (q @ k.transpose(-2, -1) / sqrt(d) + mask,
// softmax, @ v) reaches the graph as torch.matmul decomposes it: each product a 3-D
// BatchMatMulV2 over [B*H, ...] between Reshapes that merge and split the two leading dims. The
// rule reads through those Reshapes to the 4-D q, k, v (the keys [B, H, S, D] with adj_x2, as
// TransposeMatMulFold leaves them) and gives the fused node's output the root's 3-D shape; the
// Reshapes that are left collapse (NoOpElimination).
#include <cmath>
#include <cstring>
#include <optional>

#include "ge/passes/rewrite_rules.h"
#include "ge/ir/annotations.h"
#include "ge/ops/infer_util.h"
#include "ge/ops/op_registry.h"
#include "ge/ops/rewrite_utils.h"
#include "ge/ops/op_names.h"

namespace ge {
namespace {

struct AttentionMatch {
  Value q, k, v, mask;
  double scale = 1.0;
  bool causal = false;
  Node* lse = nullptr;  // the ReduceLogSumExp of the softmax's scores, when training keeps one
};

// The unrepeated kv [B, Hkv, M, N] when `spread` is BroadcastTo [B, Hkv, G, M, N] of a
// single-user Reshape of kv to [B, Hkv, 1, M, N] (grouped-query heads repeated), else nullopt.
std::optional<Value> RepeatedFrom(Value spread) {
  const Shape& ss = ShapeOf(spread);
  if (spread.node->type() != "BroadcastTo" || !IsInnerLink(spread) || ss.size() != 5) return std::nullopt;
  const Value grouped = spread.node->input(0);
  if (grouped.node->type() != kOpReshape || !IsInnerLink(grouped)) return std::nullopt;
  const Value kv = grouped.node->input(0);
  const bool repeat =
      ShapeOf(grouped) == Shape{ss[0], ss[1], 1, ss[3], ss[4]} && ShapeOf(kv) == Shape{ss[0], ss[1], ss[3], ss[4]};
  return repeat ? std::optional<Value>(kv) : std::nullopt;
}

// x [B, H, M, N] when `v` is a single-user Reshape of x to [B*H, M, N] (torch.matmul's view of
// 4-D operands for bmm); grouped-query keys or values repeated to H heads on the way (HF's
// repeat_kv: Reshape, BroadcastTo [B, Hkv, G, M, N], and this Reshape, the two Reshapes to 4-D
// and to 3-D collapsed into one) give the unrepeated [B, Hkv, M, N]; else v itself.
Value MergedFrom(Value v) {
  if (v.node->type() != kOpReshape || !IsInnerLink(v)) return v;
  const Value x = v.node->input(0);
  const Shape &xs = ShapeOf(x), &vs = ShapeOf(v);
  if (xs.size() == 4 && vs == Shape{xs[0] * xs[1], xs[2], xs[3]}) return x;
  if (xs.size() == 5 && vs == Shape{xs[0] * xs[1] * xs[2], xs[3], xs[4]})
    if (const std::optional<Value> kv = RepeatedFrom(x)) return *kv;
  return v;
}

// The 3-D product p [B*H, M, N] when `v` is a single-user Reshape of it to [B, H, M, N], else v.
Value SplitFrom(Value v) {
  if (v.node->type() != kOpReshape || !IsInnerLink(v)) return v;
  const Value p = v.node->input(0);
  const Shape &ps = ShapeOf(p), &vs = ShapeOf(v);
  const bool split = vs.size() == 4 && ps == Shape{vs[0] * vs[1], vs[2], vs[3]};
  return split && p.node->type() == kOpBatchMatMulV2 ? p : v;
}

bool PlainProduct(const Node* n, bool adj_x2) {
  return n->type() == kOpBatchMatMulV2 && !n->GetAttrOr<bool>("adj_x1", false) &&
         n->GetAttrOr<bool>("adj_x2", false) == adj_x2 && !(n->num_inputs() > 2 && n->input(2).valid()) &&
         !(n->num_inputs() > 3 && n->input(3).valid()) && !HasControlEdges(n);
}

// Whether `fill` is MaskedFill(scores, above, -inf) with `above` a constant true exactly where
// key j > query i over the scores' last two dims (torch's top-left causal mask; leading dims 1).
bool IsCausalFill(const Node& fill, const Shape& scores) {
  if (fill.type() != "MaskedFill" || scores.size() < 2) return false;
  const std::optional<double> value = ConstFloatScalar(fill.input(2));
  if (!value || !std::isinf(*value) || *value > 0) return false;
  const Tensor* above = ConstValue(fill.input(1));
  if (above == nullptr || above->desc().dtype != DataType::kBool) return false;
  const Shape& shape = above->desc().shape;
  const int64_t rows = scores[scores.size() - 2], columns = scores.back();
  if (shape.size() < 2 || shape[shape.size() - 2] != rows || shape.back() != columns) return false;
  for (size_t d = 0; d + 2 < shape.size(); ++d)
    if (shape[d] != 1) return false;
  const auto* flags = above->data_as<const uint8_t>();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < columns; ++j)
      if ((flags[i * columns + j] != 0) != (j > i)) return false;
  return true;
}

// [B, H, S, D] -> Reshape [B, H, 1, S, D] -> BroadcastTo [B, H, G, S, D] -> Reshape [B, H*G, S, D]
// gives x [B, H, S, D]; any other value is returned as it is.
Value UnrepeatedHeads(Value v) {
  if (v.node->type() != kOpReshape || !IsInnerLink(v)) return v;
  const Value spread = v.node->input(0);
  const Shape &ss = ShapeOf(spread), &vs = ShapeOf(v);
  if (ss.size() != 5 || vs != Shape{ss[0], ss[1] * ss[2], ss[3], ss[4]}) return v;
  const std::optional<Value> x = RepeatedFrom(spread);
  return x ? *x : v;
}

// The other user of the softmax's `scores` when it is their log-sum-exp over the last axis
// (keep_dims false, as the converter writes it), else nullptr.
Node* LogSumExpBeside(const Node* softmax, Value scores) {
  const std::vector<Use>& users = scores.node->users(scores.index);
  if (users.size() != 2 || HasControlEdges(scores.node) || FeedsNetOutput(scores)) return nullptr;
  Node* other = users[0].user == softmax ? users[1].user : users[0].user;
  if (other == softmax || other->type() != "ReduceLogSumExp" || HasControlEdges(other) ||
      other->GetAttrOr<bool>("keep_dims", false))
    return nullptr;
  const auto axes = ConstInts(other->input(1));
  const auto last = static_cast<int64_t>(ShapeOf(scores).size()) - 1;
  if (!axes || axes->size() != 1 || ((*axes)[0] != -1 && (*axes)[0] != last)) return nullptr;
  return other;
}

std::optional<AttentionMatch> Match(const Node& root) {
  if (!PlainProduct(&root, false)) return std::nullopt;
  AttentionMatch m;
  m.v = MergedFrom(root.input(1));
  const Value p = MergedFrom(root.input(0));
  const Node* softmax = p.node;
  const int64_t rank = static_cast<int64_t>(p.node->output_desc(p.index).shape.size());
  if ((softmax->type() != kOpSoftmaxV2 && softmax->type() != kOpSafeSoftmax) || !IsInnerLink(p)) return std::nullopt;
  const auto axes = softmax->GetAttrOr<std::vector<int64_t>>("axes", {});
  if (axes.size() != 1 || (axes[0] != -1 && axes[0] != rank - 1)) return std::nullopt;

  Value s = softmax->input(0);
  const DataType dt = s.node->output_desc(s.index).dtype;
  m.lse = LogSumExpBeside(softmax, s);
  const Value scores = s;  // shared with the log-sum-exp, if any: its only other user
  const auto link = [&](Value x) { return (m.lse != nullptr && x == scores) || IsInnerLink(x); };
  if (s.node->type() == kOpAdd && link(s)) {  // scores + mask: which side is the scores?
    const Node* add = s.node;
    for (int side = 0; side < 2; ++side) {
      const Value x = add->input(side);
      const std::string& t = x.node->type();
      if (t == "Mul" || t == "RealDiv" || t == "BatchMatMulV2" || SplitFrom(x) != x) {
        m.mask = add->input(1 - side);
        s = add->input(side);
        break;
      }
    }
    if (!m.mask.valid()) return std::nullopt;
    const TensorDesc& mask = m.mask.node->output_desc(m.mask.index);
    if (mask.dtype != dt || mask.shape.size() > static_cast<size_t>(rank)) return std::nullopt;
  }
  if (!m.mask.valid() && link(s) && IsCausalFill(*s.node, ShapeOf(s))) {
    m.causal = true;
    s = s.node->input(0);
  }
  if ((s.node->type() == kOpMul || s.node->type() == kOpRealDiv) && link(s)) {
    const Node* scaled = s.node;
    std::optional<double> c = ConstFloatScalar(scaled->input(1));
    int product_side = 0;
    if (!c && scaled->type() == kOpMul) {
      c = ConstFloatScalar(scaled->input(0));
      product_side = 1;
    }
    if (!c || *c == 0.0) return std::nullopt;
    m.scale = scaled->type() == kOpMul ? *c : 1.0 / *c;
    s = scaled->input(product_side);
  }
  s = SplitFrom(s);
  if (!PlainProduct(s.node, true) || !link(s)) return std::nullopt;
  m.q = MergedFrom(s.node->input(0));
  m.k = UnrepeatedHeads(MergedFrom(s.node->input(1)));
  m.v = UnrepeatedHeads(m.v);
  // FusedAttention takes rank 3 or 4 with equal leading dims (no broadcasting between q, k and
  // v; fewer key/value heads than query heads) and one head size.
  const Shape &q = ShapeOf(m.q), &k = ShapeOf(m.k), &v = ShapeOf(m.v);
  if (q.size() < 3 || q.size() > 4 || k.size() != q.size() || v.size() != q.size() || v.back() != q.back())
    return std::nullopt;
  if (!AttentionLeadingDimsCompatible(q, k, v)) return std::nullopt;
  // Read through the Reshapes of 3-D products, all of them or none: the scores' rank is q's, and
  // the root's output is the fused node's [B, H, S, D] or that with B and H merged.
  const Shape& out = root.output_desc(0).shape;
  Shape fused(q.begin(), q.end() - 1);
  fused.push_back(v.back());
  const Shape merged = q.size() == 4 ? Shape{q[0] * q[1], q[2], v.back()} : Shape{};
  if (static_cast<size_t>(rank) != q.size() || (out != fused && out != merged)) return std::nullopt;
  return m;
}

// The node that takes the root's place: `fused` itself, or (hand-written attention on 3-D
// products) a Reshape of its [B, H, S, D] output to the root's [B*H, S, D].
Expected<Node*> InRootShape(Graph& graph, Node* root, Node* fused) {
  const Shape& out = root->output_desc(0).shape;
  if (fused->output_desc(0).shape.size() == out.size()) return fused;
  Node* shape = AddIndexConst(graph, out, root->name() + "_merged_shape");
  Node* merged = graph.AddNode(kOpReshape, root->name() + "_merged", {fused->output(0), shape->output(0)}, 1);
  GE_RETURN_IF_ERROR(OpRegistry::Global().VerifyAndInfer(*merged));
  return merged;
}

Status Apply(Graph& graph, Node* root) {
  const auto m = Match(*root);
  GE_CHECK(m.has_value(), "{} no longer matches", root->ToString());
  const bool lse = m->lse != nullptr;
  Node* fused = graph.AddNode(lse ? "FusedAttentionWithLse" : "FusedAttention", root->name() + "_attention",
                              {m->q, m->k, m->v, m->mask}, lse ? 2 : 1);
  fused->SetAttr("scale", m->scale);
  fused->SetAttr("is_causal", m->causal);
  for (const char* key : {kAttrFxNode, kAttrSource})
    if (root->HasAttr(key)) fused->SetAttr(key, root->attrs().at(key));
  GE_RETURN_IF_ERROR(OpRegistry::Global().VerifyAndInfer(*fused));
  GE_ASSIGN_OR_RETURN(Node * replacement, InRootShape(graph, root, fused));
  GE_RETURN_IF_ERROR(SubstituteNode(graph, root, replacement));
  if (lse) {
    GE_CHECK(fused->output_desc(1) == m->lse->output_desc(0), "{} gives the log-sum-exp as {}, {} as {}",
             fused->ToString(), fused->output_desc(1).ToString(), m->lse->ToString(),
             m->lse->output_desc(0).ToString());
    graph.ReplaceAllUsesWith(Value{m->lse, 0}, Value{fused, 1});
    GE_RETURN_IF_ERROR(RemoveWithDeadInputs(graph, m->lse));
  }
  return RemoveWithDeadInputs(graph, root);
}

}  // namespace

void RegisterFusedAttentionRule(RewriteRuleRegistry& registry) {
  (void)registry.Register(RewriteRule{
      "FusedAttention", {"BatchMatMulV2"}, [](const Node& root) { return Match(root).has_value(); }, Apply});
}

}  // namespace ge
