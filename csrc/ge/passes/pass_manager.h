// The optimizer pipeline as a table: stages (GE's optimize-original, stage 1, stage 2) of
// passes, each with the level that enables it, an optional on/off option, and whether it
// repeats to a fixed point. The manager times every pass, records node-count deltas, verifies
// the graph after each pass when asked, and hands changed graphs to a callback (dumps).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ge/base/options.h"
#include "ge/ops/op_registry.h"  // VerifyGraphTypes
#include "ge/passes/pass.h"

namespace ge {

enum class OptLevel { kO1 = 1, kO3 = 3 };

struct OptimizerOptions {
  OptLevel level = OptLevel::kO3;        // ge.oo.level: O1 (cheap, always safe) or O3 (all)
  bool constant_folding = true;          // ge.oo.constantFolding
  bool dead_code_elimination = true;     // ge.oo.deadCodeElimination
  std::map<std::string, bool> switches;  // ge.optimizationSwitch: "PassName:off;PassName:on"
  bool verify_each_pass = false;         // ge.oo.verifyEachPass or $TORCHAIR_GE_VERIFY_PASSES=1
  static Expected<OptimizerOptions> FromOptions(const Options& options);
};

struct PassEntry {
  std::string name;
  std::function<std::unique_ptr<GraphPass>()> make;
  OptLevel min_level = OptLevel::kO1;
  // An option (OptimizerOptions member) that can turn the pass off, or none.
  bool OptimizerOptions::*enabled_by = nullptr;
  bool fixed_point = false;  // run until it changes nothing (at most kMaxRepeats times)
};

struct PassStage {
  std::string name;
  std::vector<PassEntry> passes;
};

struct PassStat {
  std::string stage;
  std::string pass;
  double milliseconds = 0;
  int nodes_before = 0;
  int nodes_after = 0;
  int runs = 0;
  bool changed = false;
};

inline constexpr int kMaxRepeats = 16;

// Called after a pass changed the graph.
using AfterPassFn = std::function<Status(const std::string& stage, const std::string& pass, const Graph&)>;

// Runs one stage. Passes switched off by level/options/switches are skipped (and not recorded).
Status RunPassStage(const PassStage& stage, Graph& graph, const PassContext& context, const OptimizerOptions& options,
                    std::vector<PassStat>* stats, const AfterPassFn& after_pass = nullptr);

// The optimizer stages in order (pipeline.cc).
const std::vector<PassStage>& OptimizerStages();
// Every pass name of the pipeline (for option validation and docs).
std::vector<std::string> OptimizerPassNames();

}  // namespace ge
