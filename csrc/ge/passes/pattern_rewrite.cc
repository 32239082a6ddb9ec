// PatternRewrite: applies the registered rewrite rules (rewrite_rules.h) wherever their
// pattern is found, root node by root node in topological order, until nothing matches; a rule
// ge.optimizationSwitch turns off ("RotaryMul:off") is skipped.
#include <unordered_map>

#include "ge/passes/passes.h"
#include "ge/passes/rewrite_rules.h"

namespace ge {
namespace {

class PatternRewrite final : public GraphPass {
 public:
  std::string_view name() const override { return "PatternRewrite"; }

  Status Run(Graph& graph, const PassContext& context, bool* changed) override {
    const std::vector<RewriteRule> rules = RewriteRuleRegistry::Global().Rules();
    std::unordered_map<std::string, std::vector<const RewriteRule*>> by_root;
    for (const RewriteRule& rule : rules) {
      if (context.switches != nullptr) {
        auto it = context.switches->find(rule.name);
        if (it != context.switches->end() && !it->second) continue;  // "RuleName:off"
      }
      for (const std::string& type : rule.root_types) by_root[type].push_back(&rule);
    }
    if (by_root.empty()) return {};
    GE_ASSIGN_OR_RETURN(auto order, graph.TopologicalOrder());
    std::vector<std::string> names;
    for (Node* node : order)
      if (by_root.count(node->type())) names.push_back(node->name());
    for (const std::string& name : names) {
      Node* node = graph.FindNode(name);
      if (node == nullptr) continue;  // consumed by an earlier rewrite
      for (const RewriteRule* rule : by_root[node->type()]) {
        if (!rule->matches(*node)) continue;
        GE_RETURN_IF_ERROR(rule->apply(graph, node).WithContext(fmt::format("rewrite rule {}", rule->name)));
        *changed = true;
        break;
      }
    }
    return {};
  }
};

}  // namespace

std::unique_ptr<GraphPass> CreatePatternRewritePass() { return std::make_unique<PatternRewrite>(); }

}  // namespace ge
