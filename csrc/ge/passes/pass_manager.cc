#include "ge/passes/pass_manager.h"

#include <chrono>
#include <cstdlib>

#include "ge/base/logging.h"
#include "ge/passes/rewrite_rules.h"

namespace ge {
namespace {

bool Enabled(const PassEntry& entry, const OptimizerOptions& options) {
  auto it = options.switches.find(entry.name);
  if (it != options.switches.end()) return it->second;
  if (static_cast<int>(options.level) < static_cast<int>(entry.min_level)) return false;
  return entry.enabled_by == nullptr || options.*entry.enabled_by;
}

}  // namespace

Expected<OptimizerOptions> OptimizerOptions::FromOptions(const Options& options) {
  OptimizerOptions out;
  GE_ASSIGN_OR_RETURN(const std::string level, OptionValue(options, option::kOoLevel));
  if (level == "O1")
    out.level = OptLevel::kO1;
  else if (level == "O3")
    out.level = OptLevel::kO3;
  else
    return InvalidArgument("option {}='{}' is not supported (allowed: O1, O3)", option::kOoLevel, level);
  GE_ASSIGN_OR_RETURN(out.constant_folding, BoolOption(options, option::kOoConstantFolding));
  GE_ASSIGN_OR_RETURN(out.dead_code_elimination, BoolOption(options, option::kOoDeadCodeElimination));
  GE_ASSIGN_OR_RETURN(out.verify_each_pass, BoolOption(options, option::kOoVerifyEachPass));

  // "Name:off;Name:on" -- every name must be a pass of the pipeline or a rewrite rule (which
  // PatternRewrite then skips).
  GE_ASSIGN_OR_RETURN(const std::string spec, OptionValue(options, option::kOptimizationSwitch));
  std::vector<std::string> known = OptimizerPassNames();
  for (const RewriteRule& rule : RewriteRuleRegistry::Global().Rules()) known.push_back(rule.name);
  size_t start = 0;
  while (start < spec.size()) {
    size_t end = spec.find(';', start);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    GE_CHECK(colon != std::string::npos, "ge.optimizationSwitch: '{}' is not 'PassName:on|off'", item);
    const std::string name = item.substr(0, colon);
    GE_CHECK(std::find(known.begin(), known.end(), name) != known.end(),
             "ge.optimizationSwitch: unknown pass '{}' (passes and rewrite rules: {})", name, fmt::join(known, ", "));
    const std::string state = item.substr(colon + 1);
    GE_CHECK(state == "on" || state == "off", "ge.optimizationSwitch: '{}' is not 'PassName:on|off'", item);
    out.switches[name] = state == "on";
  }
  return out;
}

Status RunPassStage(const PassStage& stage, Graph& graph, const PassContext& context, const OptimizerOptions& options,
                    std::vector<PassStat>* stats, const AfterPassFn& after_pass) {
  for (const PassEntry& entry : stage.passes) {
    if (!Enabled(entry, options)) continue;
    auto pass = entry.make();
    PassStat stat{stage.name, entry.name, 0, graph.num_nodes(), 0, 0, false};
    const auto start = std::chrono::steady_clock::now();
    for (int run = 0; run < (entry.fixed_point ? kMaxRepeats : 1); ++run) {
      bool changed = false;
      ++stat.runs;
      GE_RETURN_IF_ERROR(pass->Run(graph, context, &changed).WithContext(fmt::format("pass {}", entry.name)));
      if (changed && options.verify_each_pass)
        GE_RETURN_IF_ERROR(VerifyGraphTypes(graph).WithContext(fmt::format("graph after pass {}", entry.name)));
      stat.changed |= changed;
      if (!changed) break;
    }
    stat.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    stat.nodes_after = graph.num_nodes();
    GE_LOGD("pass {}/{}: {:.3f} ms, nodes {} -> {}{}", stage.name, entry.name, stat.milliseconds, stat.nodes_before,
            stat.nodes_after, stat.changed ? "" : " (no change)");
    if (stat.changed && after_pass) GE_RETURN_IF_ERROR(after_pass(stage.name, entry.name, graph));
    stats->push_back(std::move(stat));
  }
  return {};
}

}  // namespace ge
