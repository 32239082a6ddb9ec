#include "ge/compiler/graph_compiler.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <functional>
#include <set>
#include <iterator>

#include "ge/base/logging.h"
#include "ge/compiler/collective_copies.h"
#include "ge/compiler/memory_plan.h"
#include "ge/compiler/partition.h"
#include "ge/compiler/prepare.h"
#include "ge/compiler/schedule.h"
#include "ge/compiler/task_builder.h"
#include "ge/runtime/sink_executor.h"

namespace ge {
namespace {

Expected<DumpLevel> ParseDumpLevel(const std::string& text) {
  if (text.empty() || text == "all" || text == "1") return DumpLevel::kAll;
  if (text == "key" || text == "2") return DumpLevel::kKey;
  if (text == "final" || text == "3") return DumpLevel::kFinal;
  return InvalidArgument("option {}='{}' is not supported (allowed: all, key, final)", option::kGraphDumpLevel, text);
}

// What a stage's graph is, for dump levels.
enum class StageRole { kOther, kOriginal, kOptimized, kFinal };

bool ShouldDump(DumpLevel level, StageRole role) {
  switch (level) {
    case DumpLevel::kAll: return true;
    case DumpLevel::kKey: return role != StageRole::kOther;
    case DumpLevel::kFinal: return role == StageRole::kFinal;
  }
  return false;
}

Status DumpStage(const Graph& graph, const CompileOptions& options, const std::string& number,
                 const std::string& stage) {
  const std::string stem = fmt::format("graph_{}_pid{}_{}_{}", options.graph_id, ::getpid(), number, stage);
  for (DumpFormat format : options.dump_formats) {
    GE_ASSIGN_OR_RETURN(std::string path, DumpGraph(graph, format, options.dump_path, stem));
    GE_LOGI("graph {} stage {}: dumped {}", options.graph_id, stage, path);
  }
  return {};
}

}  // namespace

Expected<CompileOptions> CompileOptions::FromOptions(const Options& options, uint32_t graph_id) {
  CompileOptions out;
  out.graph_id = graph_id;
  GE_ASSIGN_OR_RETURN(const std::string formats, OptionValue(options, option::kGraphDumpType));
  if (!formats.empty()) {
    auto parsed = ParseDumpFormats(formats);
    if (!parsed.ok()) return parsed.status().WithContext(fmt::format("option {}", option::kGraphDumpType));
    out.dump_formats = std::move(parsed).value();
  }
  GE_ASSIGN_OR_RETURN(out.dump_path, OptionValue(options, option::kGraphDumpPath));
  GE_ASSIGN_OR_RETURN(const std::string level, OptionValue(options, option::kGraphDumpLevel));
  GE_ASSIGN_OR_RETURN(out.dump_level, ParseDumpLevel(level));
  GE_ASSIGN_OR_RETURN(out.optimizer, OptimizerOptions::FromOptions(options));
  GE_ASSIGN_OR_RETURN(const std::string order, OptionValue(options, option::kTopoSortingMode));
  auto strategy = ParseTopoStrategy(order);
  if (!strategy.ok()) return strategy.status().WithContext(fmt::format("option {}", option::kTopoSortingMode));
  out.topo_strategy = *strategy;
  GE_ASSIGN_OR_RETURN(bool no_reuse, BoolOption(options, option::kDisableReuseMemory));
  out.memory_reuse = !no_reuse;
  GE_ASSIGN_OR_RETURN(out.autofuse, autofuse::AutofuseOptions::FromOptions(options));
  GE_ASSIGN_OR_RETURN(out.limits, WorkLimits::FromOptions(options));
  GE_ASSIGN_OR_RETURN(out.streams.single_stream, BoolOption(options, option::kEnableSingleStream));
  GE_ASSIGN_OR_RETURN(const int min_work, PositiveIntOption(options, option::kStreamMinBranchWork));
  out.streams.min_branch_work = min_work;
  GE_ASSIGN_OR_RETURN(const std::string streams, OptionValue(options, option::kComputeStreams));
  if (!streams.empty()) {
    GE_ASSIGN_OR_RETURN(out.streams.compute_streams, PositiveIntOption(options, option::kComputeStreams));
  } else {  // one per core, at most 4: more streams than cores only adds switching
    out.streams.compute_streams = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 4);
  }
  return out;
}

namespace {

// What the stages hand each other. Typed results live here, not in node attributes.
struct CompileState {
  Graph& graph;
  Device& device;
  const CompileOptions& options;
  CompiledGraph& result;
  DeviceGraphEvaluator evaluator;  // constant folding runs the back end below on the device
  std::vector<Node*> schedule = {};
  MemoryPlan memory = {};
  StreamAssignment streams = {};
  autofuse::AutofuseResult fused = {};  // the kernel library and every FusedKernel node's definition
  size_t stage_number = 0;
  int pass_number = 0;
};

struct CompileStage {
  std::string name;
  StageRole role;
  std::function<Status(CompileState&)> run;
};

Status RunOptimizerStage(CompileState& s, const PassStage& stage) {
  s.pass_number = 0;
  PassContext context{&s.evaluator};
  if (!s.options.size_dependent.empty()) context.size_dependent = &s.options.size_dependent;
  context.switches = &s.options.optimizer.switches;
  // With dump level "all", every pass that changed the graph is dumped too: <NN>.<k>_<stage>_<pass>.
  const AfterPassFn after_pass = [&s](const std::string& stage_name, const std::string& pass,
                                      const Graph& g) -> Status {
    if (s.options.dump_formats.empty() || s.options.dump_level != DumpLevel::kAll) return {};
    return DumpStage(g, s.options, fmt::format("{:02d}.{}", s.stage_number, ++s.pass_number), stage_name + "_" + pass);
  };
  return RunPassStage(stage, s.graph, context, s.options.optimizer, &s.result.passes, after_pass);
}

Status RunAutofuseStage(CompileState& s) {
  GE_ASSIGN_OR_RETURN(
      s.fused, autofuse::RunAutofuse(s.graph, s.options.autofuse, s.device.kernel_factory(), &s.result.autofuse));
  return {};
}

Status RunPartitionStage(CompileState& s) {
  return PartitionGraph(s.graph, s.device.kernel_factory(), s.device.name());
}

// For dumps: every node's stream and the nodes of other streams it waits for.
void AnnotateStreams(Graph& graph, const StreamAssignment& streams) {
  for (Node* node : graph.nodes()) {
    if (streams.StreamOf(node) < 0) continue;
    node->SetAttr(kAttrStream, int64_t{streams.StreamOf(node)});
    std::vector<std::string> waits;
    for (const Node* p : streams.WaitsOf(node)) waits.push_back(p->name());
    if (!waits.empty()) node->SetAttr(kAttrStreamWaits, waits);
  }
}

// MemoryAware plans every order and keeps the smallest arena (the first listed on ties); the
// planner is pure, so the winning plan is kept as it is.
Status RunMemoryStage(CompileState& s) {
  const MemoryPlanOptions options{s.options.memory_reuse, &s.device.kernel_factory(), &s.fused.kernels};
  const bool search = s.options.topo_strategy == TopoStrategy::kMemoryAware;
  const std::vector<TopoStrategy> candidates =
      search ? std::vector<TopoStrategy>(std::begin(kPlainStrategies), std::end(kPlainStrategies))
             : std::vector<TopoStrategy>{s.options.topo_strategy};
  bool have_plan = false;
  for (TopoStrategy strategy : candidates) {
    GE_ASSIGN_OR_RETURN(std::vector<Node*> order, ScheduleNodes(s.graph, strategy));
    StreamAssignment streams = StreamAssignment::Assign(s.graph, order, s.options.streams);
    MemoryPlanOptions with_streams = options;
    with_streams.streams = &streams;
    GE_ASSIGN_OR_RETURN(MemoryPlan plan, PlanMemory(s.graph, order, with_streams));
    if (!have_plan || plan.arena_size < s.memory.arena_size) {
      s.schedule = std::move(order);
      s.memory = std::move(plan);
      s.streams = std::move(streams);
      s.result.schedule = strategy;
      have_plan = true;
    }
  }
  s.result.orders_planned = static_cast<int>(candidates.size());
  AnnotateMemory(s.graph, s.schedule, s.memory);
  AnnotateStreams(s.graph, s.streams);
  return {};
}

void CountEngines(const Graph& graph, const MemoryPlan& memory, CompiledGraph& result) {
  std::set<int64_t> groups;
  for (Node* node : graph.nodes()) {
    // A zero-copy view and an update already in its input's bytes run on no engine: counted
    // apart, so "native" counts kernels.
    const std::string engine = memory.IsView(node)       ? "view"
                               : memory.RunsNoTask(node) ? "in_place"
                                                         : node->GetAttrOr<std::string>(kAttrEngine, "?");
    ++result.engine_counts[engine];
    if (node->HasAttr(kAttrFusedGroup)) groups.insert(node->GetAttrOr<int64_t>(kAttrFusedGroup, -1));
  }
  result.fused_groups = static_cast<int>(groups.size());
}

Status RunTaskStage(CompileState& s) {
  CountEngines(s.graph, s.memory, s.result);
  const bool sizes_vary = s.options.autofuse.sizes == autofuse::SizeMode::kRunTime;
  GE_ASSIGN_OR_RETURN(s.result.model,
                      BuildModel(s.graph, s.schedule, std::move(s.memory), s.fused, &s.streams, sizes_vary));
  return {};
}

// Placement, memory and tasks: what turns an optimized graph into a runnable Model. Constant
// folding runs these too (DeviceGraphEvaluator), so a folded op gets what it gets in a compile.
const std::vector<CompileStage>& BackEndStages() {
  static const std::vector<CompileStage> stages = {
      {"partition", StageRole::kOther, RunPartitionStage},
      {"memory", StageRole::kOther, RunMemoryStage},
      {"final", StageRole::kFinal, RunTaskStage},
  };
  return stages;
}

// The pipeline for a scope: prepare, every optimizer stage of passes/pipeline.cc (the last one's
// graph is the "optimized" dump), copy insertion, auto-fusion, then the back end.
std::vector<CompileStage> AllStages(CompileScope scope) {
  std::vector<CompileStage> stages = {{"prepare", StageRole::kOther, [](CompileState& s) -> Status {
                                         GE_RETURN_IF_ERROR(PrepareGraph(s.graph));
                                         return CheckWorkLimits(s.graph, s.options.limits);
                                       }}};
  if (scope != CompileScope::kFromOptimized) {
    const std::vector<PassStage>& optimizer = OptimizerStages();
    for (const PassStage& stage : optimizer) {
      const StageRole role = &stage == &optimizer.back() ? StageRole::kOptimized : StageRole::kOther;
      stages.push_back({stage.name, role, [&stage](CompileState& s) { return RunOptimizerStage(s, stage); }});
    }
    stages.push_back({"collective_copies", StageRole::kOther, [](CompileState& s) -> Status {
                        GE_ASSIGN_OR_RETURN(s.result.collective_copies, InsertCollectiveCopies(s.graph));
                        return {};
                      }});
  }
  if (scope == CompileScope::kOptimizeOnly) return stages;
  stages.push_back({"autofuse", StageRole::kOther, RunAutofuseStage});
  for (const CompileStage& stage : BackEndStages()) stages.push_back(stage);
  return stages;
}

Status RunStages(const std::vector<CompileStage>& stages, CompileState& s) {
  const bool dumping = !s.options.dump_formats.empty();
  if (dumping && ShouldDump(s.options.dump_level, StageRole::kOriginal))
    GE_RETURN_IF_ERROR(DumpStage(s.graph, s.options, "00", "original"));
  for (size_t i = 0; i < stages.size(); ++i) {
    const CompileStage& stage = stages[i];
    s.stage_number = i + 1;
    const int nodes_before = s.graph.num_nodes();
    const auto start = std::chrono::steady_clock::now();
    Status st = stage.run(s);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!st.ok()) return st.WithContext(fmt::format("compiling graph '{}' (stage {})", s.graph.name(), stage.name));
    s.result.stages.push_back({stage.name, ms, nodes_before, s.graph.num_nodes()});
    GE_LOG_EVENT("graph {} stage {}: {:.3f} ms, nodes {} -> {}", s.options.graph_id, stage.name, ms, nodes_before,
                 s.graph.num_nodes());
    if (dumping && ShouldDump(s.options.dump_level, stage.role))
      GE_RETURN_IF_ERROR(DumpStage(s.graph, s.options, fmt::format("{:02d}", i + 1), stage.name));
  }
  return {};
}

}  // namespace

Expected<CompiledGraph> CompileGraph(Graph& graph, Device& device, const CompileOptions& options) {
  CompiledGraph result;
  CompileState state{graph, device, options, result, DeviceGraphEvaluator(device)};
  GE_RETURN_IF_ERROR(RunStages(AllStages(options.scope), state));
  return result;
}

bool DeviceGraphEvaluator::Supports(const std::string& op_type) const {
  return device_.kernel_factory().Supports(op_type);
}

Expected<std::vector<Tensor>> DeviceGraphEvaluator::Evaluate(Graph& graph) const {
  CompileOptions options;  // no dumps; one plain order is enough for a graph of a few nodes
  options.topo_strategy = TopoStrategy::kDFS;
  CompiledGraph result;
  CompileState state{graph, device_, options, result, DeviceGraphEvaluator(device_)};
  GE_RETURN_IF_ERROR(RunStages(BackEndStages(), state));
  // The executor shares ownership of the device; the compile that asked outlives this call.
  SinkExecutor executor(std::move(result.model), std::shared_ptr<Device>(&device_, [](Device*) {}));
  std::vector<Tensor> outputs;
  GE_RETURN_IF_ERROR(executor.Run({}, &outputs));
  return outputs;
}

}  // namespace ge
