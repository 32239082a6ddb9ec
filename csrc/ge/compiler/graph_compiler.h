// The compile pipeline: named stages run in order, each timed and optionally dumped.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ge/base/options.h"
#include "ge/ir/graph.h"
#include "ge/runtime/device.h"

namespace ge {

struct StageStat {
  std::string name;
  double milliseconds = 0;
  int nodes_after = 0;
};

struct CompiledGraph {
  std::shared_ptr<const Model> model;
  std::vector<StageStat> stages;
  std::map<std::string, int> engine_counts;  // engine -> node count
};

struct CompileOptions {
  uint32_t graph_id = 0;
  std::string dump_type;  // "" = no dump
  std::string dump_path = ".";
  static Expected<CompileOptions> FromOptions(const Options& options, uint32_t graph_id);
};

// Runs prepare -> partition -> memory -> tasks. With dump_type set, writes
// `<NN>_<stage>_graph_<id>.<ext>` into dump_path after each stage.
Expected<CompiledGraph> CompileGraph(Graph& graph, Device& device, const CompileOptions& options);

}  // namespace ge
