#include "ge/compiler/inplace_order.h"

#include <unordered_set>
#include <vector>

#include "ge/ops/op_registry.h"

namespace ge {
namespace {

std::unordered_set<const Node*> Descendants(Node* root) {
  std::unordered_set<const Node*> seen;
  std::vector<Node*> stack = {root};
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    auto visit = [&](Node* next) {
      if (seen.insert(next).second) stack.push_back(next);
    };
    for (int o = 0; o < n->num_outputs(); ++o)
      for (const Use& use : n->users(o)) visit(use.user);
    for (Node* c : n->control_outputs()) visit(c);
  }
  return seen;
}

}  // namespace

void OrderCollectives(Graph& graph) {
  Node* previous = nullptr;
  for (Node* node : graph.nodes()) {  // creation order
    if (!IsCollective(node->type())) continue;
    if (previous != nullptr) graph.AddControlEdge(previous, node);
    previous = node;
  }
}

Status OrderInplaceUpdates(Graph& graph) {
  for (Node* node : graph.nodes()) {
    const OpProto* proto = OpRegistry::Global().Find(node->type());
    if (!proto || proto->inplace.empty()) continue;
    const auto after = Descendants(node);
    for (const auto& [output, input] : proto->inplace) {
      // PrepareGraph ran VerifyInputs: the input exists (an optional one may be unconnected).
      const Value ref = node->input(proto->InputRange(input, node->num_inputs()).first);
      if (!ref.valid()) continue;
      for (const Use& use : ref.node->users(ref.index)) {
        if (use.user == node) continue;
        GE_CHECK(!after.count(use.user),
                 "{} reads {} output {} before {} updates it in place, but also depends on that update",
                 use.user->ToString(), ref.node->ToString(), ref.index, node->ToString());
        graph.AddControlEdge(use.user, node);
      }
    }
  }
  return {};
}

}  // namespace ge
