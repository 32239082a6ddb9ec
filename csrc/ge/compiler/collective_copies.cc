#include "ge/compiler/collective_copies.h"

#include "ge/compiler/view_ops.h"
#include "ge/ops/op_registry.h"

namespace ge {
namespace {

bool MayBeView(const Node* node) { return ViewByteOffset(node).has_value() || StridedViewOf(node).has_value(); }

bool UpdatesInPlace(const Node* node) {
  const OpProto* proto = OpRegistry::Global().Find(node->type());
  return proto != nullptr && !proto->inplace.empty();
}

// Why `x` must not be overwritten by `collective`, or "" when it may. Walks from x through the
// producers whose output may share their input's bytes (the memory planner's views), since
// writing a view writes the value it views.
std::string RuleAgainstOverwriting(Value x, const Node* collective) {
  const Node* reader = collective;
  for (Value v = x;; v = v.node->input(0)) {
    for (const Use& use : v.node->users(v.index)) {
      if (use.user == reader) continue;
      return UpdatesInPlace(use.user) ? "in_place" : "other_reader";
    }
    if (v.node->type() == "Data") return "graph_input";
    if (v.node->type() == "Const") return "constant";
    if (UpdatesInPlace(v.node)) return "in_place";
    if (!MayBeView(v.node) || v.node->num_inputs() == 0 || !v.node->input(0).valid()) return "";
    reader = v.node;
  }
}

std::string UniqueName(const Graph& graph, const std::string& base) {
  std::string name = base;
  for (int k = 1; graph.FindNode(name) != nullptr; ++k) name = base + "_" + std::to_string(k);
  return name;
}

}  // namespace

Expected<std::vector<CollectiveCopy>> InsertCollectiveCopies(Graph& graph) {
  std::vector<CollectiveCopy> copies;
  for (Node* node : graph.nodes()) {
    const OpProto* proto = OpRegistry::Global().Find(node->type());
    if (proto == nullptr || !proto->communicates_in_input) continue;
    const Value x = node->input(0);
    const std::string rule = RuleAgainstOverwriting(x, node);
    if (rule.empty()) continue;
    Node* copy = graph.AddNode("TensorMove", UniqueName(graph, node->name() + "/copy_" + rule), {x}, 1);
    copy->output_desc(0) = x.node->output_desc(x.index);
    graph.SetInput(node, 0, Value{copy, 0});
    copies.push_back({node->name(), rule});
  }
  return copies;
}

}  // namespace ge
