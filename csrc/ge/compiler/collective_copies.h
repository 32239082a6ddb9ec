// Stage "collective_copies": GE's copy-insertion rules for collectives that work in their
// input's memory (OpProto::communicates_in_input: HcomAllReduce, HcomBroadcast). Such a
// collective overwrites the bytes it reads, so its input gets a TensorMove (a copy no pass
// removes) when overwriting them would be wrong:
//   graph_input   the input is a graph input, or a view of one (the caller's tensor);
//   constant      the input is a constant, or a view of one (the model's weights);
//   other_reader  another node (or a graph output) reads the value, or a value it views;
//   in_place      the value is updated in place by another op.
// Otherwise the input is a private value that dies at the collective, and the memory planner
// places the collective's output over it: the kernel then reduces in place, with no copy.
#pragma once

#include <string>
#include <vector>

#include "ge/ir/graph.h"

namespace ge {

struct CollectiveCopy {
  std::string collective;  // node name
  std::string rule;        // graph_input, constant, other_reader or in_place
};

// Inserts the copies; returns one entry per copy, naming the rule that asked for it.
Expected<std::vector<CollectiveCopy>> InsertCollectiveCopies(Graph& graph);

}  // namespace ge
