// The rewrite rules the engine ships with (each in its own file under rules/).
#include "ge/passes/rewrite_rules.h"

namespace ge {

void RegisterFusedAttentionRule(RewriteRuleRegistry& registry);
void RegisterRotaryMulRule(RewriteRuleRegistry& registry);

void RegisterBuiltinRewriteRules(RewriteRuleRegistry& registry) {
  RegisterFusedAttentionRule(registry);
  RegisterRotaryMulRule(registry);
}

}  // namespace ge
