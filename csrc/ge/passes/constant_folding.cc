// ConstantFolding: a node whose inputs are all constants is evaluated once, at compile time,
// with the device's own kernels (so folding computes exactly what the run would), and replaced
// by constants. Never for ops with side effects, for ops the device has no kernel for, or when
// the outputs would exceed context.fold_limit_bytes (huge constants are not materialized), nor
// when an input holds a symbolic size (context.size_dependent: the graph is a size template).
#include "ge/ir/annotations.h"
#include "ge/passes/passes.h"
#include "ge/ops/rewrite_utils.h"

namespace ge {
namespace {

// Runs `node` alone on the device over its constant inputs.
Expected<std::vector<Tensor>> Evaluate(const Node& node, const GraphEvaluator& evaluator) {
  Graph mini("fold_" + node.name());
  std::vector<Value> inputs;
  for (Value v : node.inputs()) {
    if (!v.valid()) {
      inputs.push_back(Value{});
      continue;
    }
    inputs.push_back(AddConst(mini, *ConstValue(v), v.node->name())->output(0));
  }
  Node* copy = mini.AddNode(node.type(), node.name(), inputs, node.num_outputs());
  for (const auto& [key, value] : node.attrs()) copy->SetAttr(key, value);
  std::vector<Value> outputs;
  for (int o = 0; o < node.num_outputs(); ++o) {
    copy->output_desc(o) = node.output_desc(o);
    outputs.push_back(copy->output(o));
  }
  mini.AddNode(kOpNetOutput, kOpNetOutput, outputs, 0);
  return evaluator.Evaluate(mini);
}

class ConstantFolding final : public GraphPass {
 public:
  std::string_view name() const override { return "ConstantFolding"; }

  Status Run(Graph& graph, const PassContext& context, bool* changed) override {
    if (context.evaluator == nullptr) return {};
    GE_ASSIGN_OR_RETURN(auto order, graph.TopologicalOrder());
    for (Node* node : order) {
      if (!Foldable(*node, context)) continue;
      auto results = Evaluate(*node, *context.evaluator);
      if (!results.ok()) return results.status().WithContext(fmt::format("folding {}", node->ToString()));
      for (int o = 0; o < node->num_outputs(); ++o) {
        Node* c = AddConst(graph, (*results)[static_cast<size_t>(o)], fmt::format("{}_folded{}", node->name(), o));
        for (const auto& key : {kAttrFxNode, kAttrSource})  // keep the origin for dumps
          if (node->HasAttr(key)) c->SetAttr(key, node->attrs().at(key));
        graph.ReplaceAllUsesWith(node->output(o), c->output(0));
      }
      GE_RETURN_IF_ERROR(RemoveWithDeadInputs(graph, node));
      *changed = true;
    }
    return {};
  }

 private:
  static bool Foldable(const Node& node, const PassContext& context) {
    if (node.type() == kOpConst || HasSideEffects(&node) || HasControlEdges(&node) || node.num_inputs() == 0)
      return false;
    if (!context.evaluator->Supports(node.type())) return false;
    int64_t bytes = 0;
    for (int o = 0; o < node.num_outputs(); ++o) {
      if (!node.output_desc(o).IsStatic()) return false;
      bytes += node.output_desc(o).ByteSize();
    }
    if (bytes > context.fold_limit_bytes) return false;
    for (Value v : node.inputs()) {
      if (v.valid() && ConstValue(v) == nullptr) return false;
      if (v.valid() && context.size_dependent != nullptr && context.size_dependent->count(v.node->name())) return false;
    }
    return context.size_dependent == nullptr || !context.size_dependent->count(node.name());
  }
};

}  // namespace

std::unique_ptr<GraphPass> CreateConstantFoldingPass() { return std::make_unique<ConstantFolding>(); }

}  // namespace ge
