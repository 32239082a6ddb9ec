// NoOpElimination: nodes that return their input unchanged are bypassed, and chains that
// collapse are collapsed. Only exact rewrites:
//   Identity; Reshape/Flatten/BroadcastTo to the input's own shape; Reshape of a Reshape;
//   Transpose by the identity permutation; Transpose of a Transpose (one permutation, bypassed
//   when that is the identity); Cast to the input's dtype; Cast there and back when the middle
//   dtype holds every value of the first exactly; a StridedSliceV2 that keeps everything;
//   x * 1, 1 * x, x / 1, x - 0, and x + 0 where that is exact (integers, or -0.0 for floats:
//   +0.0 would turn -0.0 into +0.0).
#include "ge/passes/passes.h"
#include "ge/ops/rewrite_utils.h"
#include "ge/ops/op_names.h"

namespace ge {
namespace {

// Whether every value of `from` converts to `via` and back exactly.
bool LosslessThrough(DataType from, DataType via) {
  if (from == via || from == DataType::kBool) return true;
  auto in = [&](std::initializer_list<DataType> ok) { return std::find(ok.begin(), ok.end(), via) != ok.end(); };
  switch (from) {
    case DataType::kFloat16: return in({DataType::kFloat, DataType::kDouble});
    case DataType::kBFloat16: return in({DataType::kFloat, DataType::kDouble});
    case DataType::kFloat: return in({DataType::kDouble});
    case DataType::kInt8:
      return in({DataType::kInt16, DataType::kInt32, DataType::kInt64, DataType::kFloat16, DataType::kBFloat16,
                 DataType::kFloat, DataType::kDouble});
    case DataType::kUInt8:
      return in({DataType::kInt16, DataType::kInt32, DataType::kInt64, DataType::kFloat16, DataType::kBFloat16,
                 DataType::kFloat, DataType::kDouble, DataType::kUInt16, DataType::kUInt32, DataType::kUInt64});
    case DataType::kInt16: return in({DataType::kInt32, DataType::kInt64, DataType::kFloat, DataType::kDouble});
    case DataType::kInt32: return in({DataType::kInt64, DataType::kDouble});
    default: return false;
  }
}

bool IsIdentityPerm(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

class NoOpElimination final : public GraphPass {
 public:
  std::string_view name() const override { return "NoOpElimination"; }

  Status Run(Graph& graph, const PassContext&, bool* changed) override {
    GE_ASSIGN_OR_RETURN(auto order, graph.TopologicalOrder());
    std::vector<std::string> names;  // nodes may be removed as we go: look them up by name
    for (Node* node : order) names.push_back(node->name());
    for (const std::string& name : names) {
      Node* node = graph.FindNode(name);
      if (node == nullptr || HasControlEdges(node)) continue;
      GE_ASSIGN_OR_RETURN(bool rewritten, Rewrite(graph, node));
      *changed |= rewritten;
    }
    return {};
  }

 private:
  // Bypasses `node` to `to` when allowed.
  static Expected<bool> TryBypass(Graph& graph, Node* node, Value to) {
    if (!CanBypass(node, to)) return false;
    GE_RETURN_IF_ERROR(Bypass(graph, node, to));
    return true;
  }

  static bool SameShape(const Node* node) {
    return node->output_desc(0).shape == node->input(0).node->output_desc(node->input(0).index).shape;
  }

  static Expected<bool> Rewrite(Graph& graph, Node* node) {
    const std::string& type = node->type();
    if (node->num_outputs() != 1 || node->num_inputs() == 0 || !node->input(0).valid()) return false;
    const Value x = node->input(0);
    if (type == "Identity") return TryBypass(graph, node, x);
    if ((type == "Flatten" || type == "BroadcastTo" || IsPlainReshape(node)) && SameShape(node))
      return TryBypass(graph, node, x);
    if (IsPlainReshape(node) && IsPlainReshape(x.node) && !IsMutatedValue(x.node->input(0))) {
      // Reshape(Reshape(y, s1), s2) == Reshape(y, s2).
      Node* inner = x.node;
      graph.SetInput(node, 0, inner->input(0));
      if (!inner->HasUsers() && !HasControlEdges(inner)) GE_RETURN_IF_ERROR(RemoveWithDeadInputs(graph, inner));
      return true;
    }
    if (type == "Transpose") {
      auto perm = ConstInts(node->input(1));
      if (!perm) return false;
      if (IsIdentityPerm(*perm)) return TryBypass(graph, node, x);
      if (x.node->type() == kOpTranspose && !HasControlEdges(x.node) && !IsMutatedValue(x.node->input(0))) {
        auto inner_perm = ConstInts(x.node->input(1));
        if (!inner_perm || inner_perm->size() != perm->size()) return false;
        std::vector<int64_t> composed(perm->size());  // out[i] = y[inner[perm[i]]]
        for (size_t i = 0; i < perm->size(); ++i) composed[i] = (*inner_perm)[static_cast<size_t>((*perm)[i])];
        Node* inner = x.node;
        if (IsIdentityPerm(composed)) return TryBypass(graph, node, inner->input(0));
        Node* c = AddIndexConst(graph, composed, node->name() + "_perm");
        graph.SetInput(node, 0, inner->input(0));
        const Node* old_perm = node->input(1).node;
        graph.SetInput(node, 1, c->output(0));
        if (!old_perm->HasUsers()) GE_RETURN_IF_ERROR(graph.RemoveNode(const_cast<Node*>(old_perm)));
        if (!inner->HasUsers() && !HasControlEdges(inner)) GE_RETURN_IF_ERROR(RemoveWithDeadInputs(graph, inner));
        return true;
      }
      return false;
    }
    if (type == "Cast") {
      const DataType in = x.node->output_desc(x.index).dtype;
      if (in == node->output_desc(0).dtype) return TryBypass(graph, node, x);
      if (x.node->type() == kOpCast && !HasControlEdges(x.node)) {
        const Value y = x.node->input(0);
        const DataType origin = y.node->output_desc(y.index).dtype;
        if (origin == node->output_desc(0).dtype && LosslessThrough(origin, in)) return TryBypass(graph, node, y);
      }
      return false;
    }
    if (type == "StridedSliceV2" && SameShape(node)) {
      auto strides = ConstInts(node->input(4));
      if (strides && std::all_of(strides->begin(), strides->end(), [](int64_t s) { return s == 1; }))
        return TryBypass(graph, node, x);
      return false;
    }
    if (node->num_inputs() == 2 && node->input(1).valid()) {
      const Value a = x, b = node->input(1);
      const DataType dt = node->output_desc(0).dtype;
      const double zero = IsFloatingPoint(dt) ? -0.0 : 0.0;
      auto same_as = [&](Value v) {
        return v.node->output_desc(v.index).dtype == dt &&
               v.node->output_desc(v.index).shape == node->output_desc(0).shape;
      };
      if (type == "Mul") {
        if (same_as(a) && ConstIsAll(b, 1)) return TryBypass(graph, node, a);
        if (same_as(b) && ConstIsAll(a, 1)) return TryBypass(graph, node, b);
      } else if (type == "RealDiv") {
        if (same_as(a) && ConstIsAll(b, 1)) return TryBypass(graph, node, a);
      } else if (type == "Sub") {
        if (same_as(a) && ConstIsAll(b, 0.0)) return TryBypass(graph, node, a);
      } else if (type == "Add") {
        if (same_as(a) && ConstIsAll(b, zero)) return TryBypass(graph, node, a);
        if (same_as(b) && ConstIsAll(a, zero)) return TryBypass(graph, node, b);
      }
    }
    return false;
  }
};

}  // namespace

std::unique_ptr<GraphPass> CreateNoOpEliminationPass() { return std::make_unique<NoOpElimination>(); }

}  // namespace ge
