#include "ge/passes/rewrite_rules.h"

#include "ge/base/logging.h"

namespace ge {

RewriteRuleRegistry& RewriteRuleRegistry::Global() {
  static RewriteRuleRegistry* registry = [] {
    auto* r = new RewriteRuleRegistry();  // never destroyed: user libraries may register at exit
    RegisterBuiltinRewriteRules(*r);
    return r;
  }();
  return *registry;
}

Status RewriteRuleRegistry::Register(RewriteRule rule) {
  GE_CHECK(!rule.name.empty() && !rule.root_types.empty() && rule.matches && rule.apply,
           "rewrite rule '{}' needs a name, root op types, a condition and an apply function", rule.name);
  std::lock_guard<std::mutex> lock(mu_);
  for (const RewriteRule& r : rules_) GE_CHECK(r.name != rule.name, "rewrite rule '{}' is registered twice", rule.name);
  rules_.push_back(std::move(rule));
  return {};
}

std::vector<RewriteRule> RewriteRuleRegistry::Rules() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rules_;
}

RewriteRuleRegistrar::RewriteRuleRegistrar(RewriteRule rule) {
  const std::string name = rule.name;
  Status st = RewriteRuleRegistry::Global().Register(std::move(rule));
  if (!st.ok()) GE_LOGE("{}", st.ToString());
}

}  // namespace ge
