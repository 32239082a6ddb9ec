// The engine's public entry, shaped like GE's: GEInitialize / Session / GEFinalize.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "ge/base/options.h"
#include "ge/compiler/graph_compiler.h"
#include "ge/ir/graph.h"
#include "ge/offline_model.h"
#include "ge/runtime/run_debug.h"

namespace ge {

// Global set-up: selects the device (option "ge.device", default "cpu"), which must be
// registered. Sessions fail with FailedPrecondition until this has been called.
Status GEInitialize(const Options& options = {});
Status GEFinalize();
bool GEIsInitialized();
// What a compile uses: GEInitialize's options, then `options` over them, then the environment.
Expected<Options> EffectiveOptions(const Options& options);

struct CompiledGraphSummary {
  bool is_static = true;
  int64_t const_memory_size = 0;
  int64_t feature_memory_size = 0;  // the arena
  int64_t arena_lower_bound = 0;
  int64_t arena_no_reuse = 0;
  int64_t view_values = 0;
  int64_t inplace_values = 0;
  int64_t updates_in_input = 0;  // Assigns of graph inputs whose value was computed in place
  int64_t workspace_bytes = 0;   // kernel scratch, planned in the arena (feature_memory_size includes it)
  int64_t stream_num = 1;
  int64_t task_num = 0;
  std::vector<TensorDesc> input_descs;
  std::vector<TensorDesc> output_descs;
  std::map<std::string, int> engine_counts;
  int fused_groups = 0;
  std::string schedule;              // the execution order kept (TopoStrategyName; MemoryAware resolved)
  int orders_planned = 0;            // candidate orders the memory stage planned to choose it
  autofuse::AutofuseStats autofuse;  // generated kernels: how many, nodes fused, cache hit, build time, fallback reason
  std::vector<StageStat> stages;
  std::vector<PassStat> passes;
};

// The profiled runs of one graph since the last call (config.profiling / ge.exec.profilingMode).
struct GraphProfile {
  std::string graph_name;
  std::vector<std::string> task_names, task_types, task_engines;
  std::vector<int64_t> task_streams;
  std::vector<RunProfile> runs;
  uint64_t dropped_runs = 0;  // runs not kept because the log was full
};

class SinkExecutor;

class Session {
 public:
  explicit Session(Options options = {});
  ~Session();

  Status AddGraph(uint32_t graph_id, std::unique_ptr<Graph> graph, const Options& options = {});
  // A graph the optimizer has already run on (OptimizeInstance, offline_model.h: an instance of an
  // optimized size template); CompileGraph then starts after the optimizer.
  Status AddOptimizedGraph(uint32_t graph_id, std::unique_ptr<Graph> graph, const Options& options = {});
  Status CompileGraph(uint32_t graph_id);
  // Compiles graph `graph_id` as CompileGraph does, and returns it as a model file held in memory
  // (every constant inline): what a compiled-graph cache keeps.
  Expected<std::string> CompileGraphToModel(uint32_t graph_id, const ExportInfo& info = {});
  // Adds graph `graph_id` compiled from a model file held in memory (untrusted: checked as
  // LoadModel checks it); RunGraph runs it at once.
  Status LoadGraph(uint32_t graph_id, std::string_view model_file, const Options& options = {});
  // Thread-safe; the graph must have been compiled with CompileGraph.
  Status RunGraph(uint32_t graph_id, const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs);
  Status RemoveGraph(uint32_t graph_id);
  Expected<CompiledGraphSummary> GetCompiledGraphSummary(uint32_t graph_id) const;
  // How a compiled graph replays its streams now: single, timing, streams or task_order.
  Expected<std::string> StreamMode(uint32_t graph_id) const;
  // Takes the profiled runs of a graph compiled with profiling on (empty otherwise).
  Expected<GraphProfile> TakeProfile(uint32_t graph_id);
  // The graph as it stands (after compilation: annotated with engines and memory).
  Expected<const Graph*> GetGraph(uint32_t graph_id) const;

 private:
  struct Entry;
  Expected<std::shared_ptr<Entry>> Find(uint32_t graph_id) const;
  Expected<std::shared_ptr<SinkExecutor>> Executor(uint32_t graph_id) const;  // compiled graphs only
  std::shared_ptr<Entry> NewEntry(const Options& options) const;              // session options, then `options`
  Status Insert(uint32_t graph_id, std::shared_ptr<Entry> entry);
  Status Add(uint32_t graph_id, std::unique_ptr<Graph> graph, const Options& options, CompileScope scope);

  Options options_;
  mutable std::mutex mu_;
  std::map<uint32_t, std::shared_ptr<Entry>> graphs_;
};

}  // namespace ge
