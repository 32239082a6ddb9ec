// Auto-fusion's grouping: which fusible nodes share one generated kernel.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ge/ir/graph.h"

namespace ge::autofuse {

struct FusionGroup {
  Shape shape;                  // the iteration space: every element-level member's output shape
  std::optional<int> row_axis;  // set when the group reduces: its rows are axes [row_axis, rank)
  std::string user_stream;      // the members' npu_stream_switch label (one per group)
  std::vector<Node*> nodes;     // in topological order
};

struct GroupingOptions {
  int max_nodes = 256;  // a group never grows beyond this many nodes
  int max_inputs = 16;  // nor reads more than this many distinct tensors
};

// Greedy, in topological order: a fusible node joins the group of one of its producers when
//  - it computes over the group's iteration space (element-level: output shape == the space),
//    or it is a row-level op (shape: the space with the row axes set to 1) on row-level group
//    values, or it reduces exactly the group's row axes (all reductions of a group share them);
//  - joining creates no cycle (no path leaves the group and comes back to the node);
//  - the user stream label (npu_stream_switch) matches and the limits hold.
// Otherwise it starts a group. Single-node groups are returned too: the stage keeps those that
// can take a producer (matmul + activation).
std::vector<FusionGroup> FindFusionGroups(const Graph& graph, const GroupingOptions& options);

// The row shape of a space split at row_axis: the space with the row axes set to 1.
Shape RowShape(const Shape& shape, int row_axis);

}  // namespace ge::autofuse
