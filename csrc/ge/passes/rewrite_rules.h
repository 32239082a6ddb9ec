// Declarative graph rewrites ("this subgraph -> that subgraph") for the PatternRewrite pass.
// A rule names the op types its pattern ends at (the root), a cheap condition on the root that
// says whether the whole pattern is there, and an apply step that rewrites it. Rules keep the
// invariants of passes/README.md; RewriteHelpers below cover the usual checks.
//
// Built-in rules are registered by RegisterBuiltinRewriteRules (rules/*.cc). A user library
// registers its own with GE_REGISTER_REWRITE_RULE at load time.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "ge/ir/graph.h"

namespace ge {

struct RewriteRule {
  std::string name;
  std::vector<std::string> root_types;
  std::function<bool(const Node& root)> matches;
  std::function<Status(Graph& graph, Node* root)> apply;
};

class RewriteRuleRegistry {
 public:
  static RewriteRuleRegistry& Global();
  // Rejects a rule without a name, root types or functions, or with a name already taken.
  Status Register(RewriteRule rule);
  std::vector<RewriteRule> Rules() const;  // a copy: rules may be added while a pass runs elsewhere

 private:
  mutable std::mutex mu_;
  std::vector<RewriteRule> rules_;
};

void RegisterBuiltinRewriteRules(RewriteRuleRegistry& registry);

struct RewriteRuleRegistrar {
  explicit RewriteRuleRegistrar(RewriteRule rule);
};

}  // namespace ge

#define GE_REWRITE_CONCAT_INNER_(a, b) a##b
#define GE_REWRITE_CONCAT_(a, b) GE_REWRITE_CONCAT_INNER_(a, b)
// GE_REGISTER_REWRITE_RULE(MakeMyRule()); at namespace scope in a user library.
#define GE_REGISTER_REWRITE_RULE(rule) \
  static ::ge::RewriteRuleRegistrar GE_REWRITE_CONCAT_(ge_rewrite_rule_, __LINE__)(rule)
