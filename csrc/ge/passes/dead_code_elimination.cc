// DeadCodeElimination: removes every node that neither reaches NetOutput (through data or
// control edges) nor has a side effect (an in-place update, a TorchOp). Data nodes stay: they
// are the graph's signature.
#include <unordered_set>

#include "ge/passes/passes.h"
#include "ge/ops/rewrite_utils.h"

namespace ge {
namespace {

class DeadCodeElimination final : public GraphPass {
 public:
  std::string_view name() const override { return "DeadCodeElimination"; }

  Status Run(Graph& graph, const PassContext&, bool* changed) override {
    std::unordered_set<const Node*> live;
    std::vector<Node*> stack;
    for (Node* node : graph.nodes())
      if (HasSideEffects(node)) stack.push_back(node);
    while (!stack.empty()) {
      Node* node = stack.back();
      stack.pop_back();
      if (!live.insert(node).second) continue;
      for (Value v : node->inputs())
        if (v.valid()) stack.push_back(v.node);
      for (Node* c : node->control_inputs()) stack.push_back(c);
    }
    GE_ASSIGN_OR_RETURN(auto order, graph.TopologicalOrder());
    for (auto it = order.rbegin(); it != order.rend(); ++it) {  // users before producers
      if (live.count(*it)) continue;
      GE_RETURN_IF_ERROR(graph.RemoveNode(*it));
      *changed = true;
    }
    return {};
  }
};

}  // namespace

std::unique_ptr<GraphPass> CreateDeadCodeEliminationPass() { return std::make_unique<DeadCodeElimination>(); }

}  // namespace ge
