// CommonSubexpressionElimination: two nodes of the same type with the same inputs and the same
// public attributes compute the same values; the later one is replaced by the earlier.
// Nodes with side effects, tensor attributes or control edges, and nodes whose outputs are
// graph outputs (merging would make two outputs one tensor), are left alone.
#include <map>

#include "ge/passes/passes.h"
#include "ge/ops/rewrite_utils.h"

namespace ge {
namespace {

// A textual key: type, inputs by node id and index, public attrs. Empty when not eligible.
std::string KeyOf(const Node* node) {
  if (node->type() == kOpConst || HasSideEffects(node) || HasControlEdges(node)) return {};
  std::string key = fmt::format("{}|{}|", node->type(), node->num_outputs());
  for (Value v : node->inputs()) key += v.valid() ? fmt::format("{}:{},", v.node->id(), v.index) : std::string("-,");
  for (const auto& [name, value] : node->attrs()) {
    if (!name.empty() && name[0] == '_') continue;
    if (std::holds_alternative<Tensor>(value)) return {};
    key += fmt::format("|{}={}", name, AttrToString(value));
  }
  return key;
}

class CommonSubexpressionElimination final : public GraphPass {
 public:
  std::string_view name() const override { return "CommonSubexpressionElimination"; }

  Status Run(Graph& graph, const PassContext&, bool* changed) override {
    std::map<std::string, Node*> first;
    GE_ASSIGN_OR_RETURN(auto order, graph.TopologicalOrder());
    for (Node* node : order) {
      const std::string key = KeyOf(node);
      if (key.empty()) continue;
      auto [it, inserted] = first.emplace(key, node);
      if (inserted) continue;
      bool output_or_mutated = false;
      for (int o = 0; o < node->num_outputs(); ++o)
        output_or_mutated |=
            FeedsNetOutput(node->output(o)) || IsMutatedValue(node->output(o)) || IsMutatedValue(it->second->output(o));
      if (output_or_mutated) continue;
      for (int o = 0; o < node->num_outputs(); ++o) graph.ReplaceAllUsesWith(node->output(o), it->second->output(o));
      GE_RETURN_IF_ERROR(graph.RemoveNode(node));
      *changed = true;
    }
    return {};
  }
};

}  // namespace

std::unique_ptr<GraphPass> CreateCommonSubexpressionEliminationPass() {
  return std::make_unique<CommonSubexpressionElimination>();
}

}  // namespace ge
