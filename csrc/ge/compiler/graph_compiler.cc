#include "ge/compiler/graph_compiler.h"

#include <unistd.h>

#include <chrono>
#include <functional>
#include <set>

#include "ge/base/logging.h"
#include "ge/compiler/memory_assign.h"
#include "ge/compiler/partition.h"
#include "ge/compiler/prepare.h"
#include "ge/compiler/schedule.h"
#include "ge/compiler/task_builder.h"

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

Status DumpStage(const Graph& graph, const CompileOptions& options, const std::string& number, const std::string& stage) {
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
  const std::string formats = GetOption(options, option::kGraphDumpType);
  if (!formats.empty()) {
    auto parsed = ParseDumpFormats(formats);
    if (!parsed.ok()) return parsed.status().WithContext(fmt::format("option {}", option::kGraphDumpType));
    out.dump_formats = std::move(parsed).value();
  }
  out.dump_path = GetOption(options, option::kGraphDumpPath, ".");
  GE_ASSIGN_OR_RETURN(out.dump_level, ParseDumpLevel(GetOption(options, option::kGraphDumpLevel)));
  GE_ASSIGN_OR_RETURN(out.optimizer, OptimizerOptions::FromOptions(options));
  auto strategy = ParseTopoStrategy(GetOption(options, option::kTopoSortingMode));
  if (!strategy.ok()) return strategy.status().WithContext(fmt::format("option {}", option::kTopoSortingMode));
  out.topo_strategy = *strategy;
  GE_ASSIGN_OR_RETURN(bool no_reuse, GetBoolOption(options, option::kDisableReuseMemory, false));
  out.memory_reuse = !no_reuse;
  GE_ASSIGN_OR_RETURN(out.autofuse, autofuse::AutofuseOptions::FromOptions(options));
  return out;
}

Expected<CompiledGraph> CompileGraph(Graph& graph, Device& device, const CompileOptions& options) {
  CompiledGraph result;
  std::vector<Node*> schedule;
  MemoryLayout layout;
  std::shared_ptr<const KernelLibrary> kernel_library;

  struct Stage {
    const char* name;
    StageRole role;
    std::function<Status()> run;
  };
  const PassContext pass_context{&device};
  const bool dumping = !options.dump_formats.empty();
  size_t stage_number = 0;
  int pass_number = 0;
  // With dump level "all", every pass that changed the graph is dumped too: <NN>.<k>_<stage>_<pass>.
  const AfterPassFn after_pass = [&](const std::string& stage, const std::string& pass, const Graph& g) -> Status {
    if (!dumping || options.dump_level != DumpLevel::kAll) return {};
    return DumpStage(g, options, fmt::format("{:02d}.{}", stage_number, ++pass_number), stage + "_" + pass);
  };
  auto optimizer_stage = [&](const PassStage& stage) {
    return [&, stage_ptr = &stage]() -> Status {
      pass_number = 0;
      return RunPassStage(*stage_ptr, graph, pass_context, options.optimizer, &result.passes, after_pass);
    };
  };
  const auto& opt = OptimizerStages();
  // The last stage that rewrites the graph carries StageRole::kOptimized.
  const std::vector<Stage> stages = {
      {"prepare", StageRole::kOther, [&] { return PrepareGraph(graph); }},
      {opt[0].name.c_str(), StageRole::kOther, optimizer_stage(opt[0])},
      {opt[1].name.c_str(), StageRole::kOther, optimizer_stage(opt[1])},
      {opt[2].name.c_str(), StageRole::kOptimized, optimizer_stage(opt[2])},
      {"autofuse", StageRole::kOther,
       [&]() -> Status {
         GE_ASSIGN_OR_RETURN(kernel_library, autofuse::RunAutofuse(graph, options.autofuse, &result.autofuse));
         return {};
       }},
      {"partition", StageRole::kOther, [&] { return PartitionGraph(graph, device.kernel_factory(), device.name()); }},
      {"memory", StageRole::kOther,
       [&]() -> Status {
         // MemoryAware tries every order and keeps the smallest arena (the first listed on ties).
         TopoStrategy chosen = options.topo_strategy;
         if (chosen == TopoStrategy::kMemoryAware) {
           int64_t best = -1;
           for (TopoStrategy s : kPlainStrategies) {
             GE_ASSIGN_OR_RETURN(auto order, ScheduleNodes(graph, s));
             GE_ASSIGN_OR_RETURN(MemoryLayout trial,
                                 AssignMemory(graph, order, options.memory_reuse, &device.kernel_factory()));
             if (best < 0 || trial.arena_size < best) {
               best = trial.arena_size;
               chosen = s;
             }
           }
         }
         GE_ASSIGN_OR_RETURN(schedule, ScheduleNodes(graph, chosen));
         GE_ASSIGN_OR_RETURN(layout, AssignMemory(graph, schedule, options.memory_reuse, &device.kernel_factory()));
         return {};
       }},
      {"final", StageRole::kFinal,
       [&]() -> Status {
         GE_ASSIGN_OR_RETURN(result.model, BuildModel(graph, schedule, std::move(layout), kernel_library));
         return {};
       }},
  };

  if (dumping && ShouldDump(options.dump_level, StageRole::kOriginal))
    GE_RETURN_IF_ERROR(DumpStage(graph, options, "00", "original"));
  for (size_t i = 0; i < stages.size(); ++i) {
    stage_number = i + 1;
    const int nodes_before = graph.num_nodes();
    const auto start = std::chrono::steady_clock::now();
    Status st = stages[i].run();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!st.ok()) return st.WithContext(fmt::format("compiling graph '{}' (stage {})", graph.name(), stages[i].name));
    result.stages.push_back({stages[i].name, ms, nodes_before, graph.num_nodes()});
    GE_LOG_EVENT("graph {} stage {}: {:.3f} ms, nodes {} -> {}", options.graph_id, stages[i].name, ms, nodes_before,
                 graph.num_nodes());
    if (dumping && ShouldDump(options.dump_level, stages[i].role))
      GE_RETURN_IF_ERROR(DumpStage(graph, options, fmt::format("{:02d}", i + 1), stages[i].name));
  }
  std::set<int64_t> groups;
  for (Node* node : graph.nodes()) {
    // A zero-copy view runs on no engine: counted apart, so "native" counts kernels.
    ++result.engine_counts[node->GetAttrOr<bool>(kAttrView, false) ? std::string("view")
                                                                   : node->GetAttrOr<std::string>(kAttrEngine, "?")];
    if (node->HasAttr(kAttrFusedGroup)) groups.insert(node->GetAttrOr<int64_t>(kAttrFusedGroup, -1));
  }
  result.fused_groups = static_cast<int>(groups.size());
  return result;
}

}  // namespace ge
