// The compile pipeline: named stages run in order, each timed and optionally dumped.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "ge/autofuse/autofuse_stage.h"
#include "ge/base/options.h"
#include "ge/ir/graph.h"
#include "ge/compiler/work_limits.h"
#include "ge/compiler/collective_copies.h"
#include "ge/compiler/schedule.h"
#include "ge/compiler/stream_assign.h"
#include "ge/passes/pass_manager.h"
#include "ge/runtime/device.h"
#include "ge/serialize/graph_dump.h"

namespace ge {

struct StageStat {
  std::string name;
  double milliseconds = 0;
  int nodes_before = 0;
  int nodes_after = 0;
};

struct CompiledGraph {
  std::shared_ptr<const Model> model;
  std::vector<StageStat> stages;
  std::map<std::string, int> engine_counts;  // engine -> node count
  int fused_groups = 0;                      // distinct _fused_group values
  std::vector<PassStat> passes;              // every optimizer pass that ran, in order
  autofuse::AutofuseStats autofuse;
  std::vector<CollectiveCopy> collective_copies;  // TensorMoves the copy-insertion rules added
  // The order the memory stage kept (a plain strategy: MemoryAware resolved) and how many
  // candidate orders it planned to choose it.
  TopoStrategy schedule = TopoStrategy::kDFS;
  int orders_planned = 0;
};

// Which stages a graph dump covers (option ge.graphDumpLevel).
enum class DumpLevel {
  kAll,    // "all" / "1": the original graph and the graph after every stage
  kKey,    // "key" / "2": original, optimized (after the last optimizing stage) and final
  kFinal,  // "final" / "3": only the final graph
};

// How much of the pipeline a compile runs: model export stops after the optimizer (the graph a
// model file keeps), and loading a model file starts from that graph (verified, not optimized again).
enum class CompileScope : uint8_t {
  kWhole,          // prepare -> optimizer -> collective_copies -> autofuse -> back end
  kOptimizeOnly,   // prepare -> optimizer -> collective_copies (no model)
  kFromOptimized,  // prepare -> autofuse -> back end
};

struct CompileOptions {
  uint32_t graph_id = 0;
  CompileScope scope = CompileScope::kWhole;
  std::vector<DumpFormat> dump_formats;  // empty = no dump
  std::string dump_path = ".";
  DumpLevel dump_level = DumpLevel::kAll;
  OptimizerOptions optimizer;
  TopoStrategy topo_strategy = kDefaultTopoStrategy;
  bool memory_reuse = true;  // ge.exec.disableReuseMemory=1 turns it off
  autofuse::AutofuseOptions autofuse;
  StreamOptions streams;  // ge.enableSingleStream, ge.exec.computeStreams
  WorkLimits limits;      // ge.maxTensorElements, ge.maxWorkPerRun (checked after prepare)
  // Optimizing a size template: its site nodes (PassContext::size_dependent). Not an option string.
  std::unordered_set<std::string> size_dependent;
  static Expected<CompileOptions> FromOptions(const Options& options, uint32_t graph_id);
};

// Runs graphs of constants for constant folding through the back end of the pipeline
// (partition, memory with the device's kernel workspaces, tasks) and the sink executor.
class DeviceGraphEvaluator final : public GraphEvaluator {
 public:
  explicit DeviceGraphEvaluator(Device& device) : device_(device) {}
  bool Supports(const std::string& op_type) const override;
  Expected<std::vector<Tensor>> Evaluate(Graph& graph) const override;

 private:
  Device& device_;
};

// Runs prepare -> every optimizer stage of passes/pipeline.cc (optimize_original,
// optimize_stage1, optimize_stage2) -> autofuse (generated kernels, ge/autofuse) -> partition -> memory -> final
// (tasks). With dump formats set, writes `graph_<id>_pid<pid>_<NN>_<stage>.<ext>` into dump_path: stage 00 is the graph
// as given
// ("original"), the last is "final" (every node annotated with engine, stream, memory and
// its FX origin).
Expected<CompiledGraph> CompileGraph(Graph& graph, Device& device, const CompileOptions& options);

}  // namespace ge
