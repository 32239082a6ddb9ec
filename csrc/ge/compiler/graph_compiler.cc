#include "ge/compiler/graph_compiler.h"

#include <chrono>
#include <functional>

#include "ge/base/logging.h"
#include "ge/compiler/memory_assign.h"
#include "ge/compiler/partition.h"
#include "ge/compiler/prepare.h"
#include "ge/compiler/task_builder.h"
#include "ge/serialize/graph_dump.h"

namespace ge {

Expected<CompileOptions> CompileOptions::FromOptions(const Options& options, uint32_t graph_id) {
  CompileOptions out;
  out.graph_id = graph_id;
  out.dump_type = GetOption(options, option::kGraphDumpType);
  out.dump_path = GetOption(options, option::kGraphDumpPath, ".");
  GE_CHECK(out.dump_type.empty() || out.dump_type == "txt", "option {}='{}' is not supported (allowed: txt)",
           option::kGraphDumpType, out.dump_type);
  return out;
}

Expected<CompiledGraph> CompileGraph(Graph& graph, Device& device, const CompileOptions& options) {
  CompiledGraph result;
  std::vector<Node*> schedule;
  MemoryLayout layout;

  struct Stage {
    const char* name;
    std::function<Status()> run;
  };
  const std::vector<Stage> stages = {
      {"prepare", [&] { return PrepareGraph(graph); }},
      {"partition", [&] { return PartitionGraph(graph, device.kernel_factory(), device.name()); }},
      {"memory",
       [&]() -> Status {
         GE_ASSIGN_OR_RETURN(schedule, graph.TopologicalOrder());
         GE_ASSIGN_OR_RETURN(layout, AssignMemory(graph, schedule));
         return {};
       }},
      {"tasks",
       [&]() -> Status {
         GE_ASSIGN_OR_RETURN(result.model, BuildModel(graph, schedule, std::move(layout)));
         return {};
       }},
  };

  for (size_t i = 0; i < stages.size(); ++i) {
    const auto start = std::chrono::steady_clock::now();
    Status st = stages[i].run();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!st.ok()) return st.WithContext(fmt::format("compiling graph '{}' (stage {})", graph.name(), stages[i].name));
    result.stages.push_back({stages[i].name, ms, graph.num_nodes()});
    GE_LOGD("graph {} stage {}: {:.3f} ms, {} nodes", options.graph_id, stages[i].name, ms, graph.num_nodes());
    if (!options.dump_type.empty()) {
      const std::string file = fmt::format("{:02d}_{}_graph_{}.{}", i + 1, stages[i].name, options.graph_id, options.dump_type);
      GE_RETURN_IF_ERROR(DumpGraph(graph, options.dump_type, options.dump_path, file));
    }
  }
  for (Node* node : graph.nodes()) ++result.engine_counts[node->GetAttrOr<std::string>(kAttrEngine, "?")];
  return result;
}

}  // namespace ge
