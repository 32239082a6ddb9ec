// The execution order of a graph (option ge.topoSortingMode / experimental_config.
// topology_sorting_strategy). Every order is topological over data and control edges; they
// differ in which ready node runs next, which decides how long values stay live (the arena).
#pragma once

#include <string_view>
#include <vector>

#include "ge/base/options.h"
#include "ge/ir/graph.h"

namespace ge {

enum class TopoStrategy {
  kBFS,   // "BFS" / "0": ready nodes in the order they became ready (breadth first)
  kDFS,   // "DFS" / "1": the users a node just released run next (depth first)
  kRDFS,  // "RDFS" / "2": post-order from the outputs, inputs in input order: each value is made just before its first
          // use
  kStableRDFS,   // "StableRDFS" / "3": like RDFS, inputs visited in creation order
  kMemoryAware,  // "MemoryAware": the one of the four whose arena plan is smallest (DFS on ties)
};

inline constexpr TopoStrategy kPlainStrategies[] = {TopoStrategy::kDFS, TopoStrategy::kBFS, TopoStrategy::kRDFS,
                                                    TopoStrategy::kStableRDFS};

Expected<TopoStrategy> ParseTopoStrategy(std::string_view text);  // "" gives the default
std::string_view TopoStrategyName(TopoStrategy strategy);         // what ParseTopoStrategy reads
inline constexpr TopoStrategy kDefaultTopoStrategy = TopoStrategy::kMemoryAware;

// The options a later instance of a size template compiles with. Instances differ only in sizes,
// so under MemoryAware (every plain order planned, the smallest arena kept) they take
// `first_order`, the order the template's first instance kept, instead of planning all of them
// again; a strategy the options name is kept. Used by OfflineModel and, through the bindings, by
// the frontend's instances.
Options OptionsForLaterInstance(const Options& options, TopoStrategy first_order);

// kMemoryAware is resolved by the memory stage (it needs the planner); here it means DFS.
Expected<std::vector<Node*>> ScheduleNodes(const Graph& graph, TopoStrategy strategy);

}  // namespace ge
