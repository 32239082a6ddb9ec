// Limits on what one graph may ask of the machine. A graph from a file (graph text, a model
// file) is untrusted input: without limits, a few bytes can ask for a tensor of 2^62 elements
// or a run of hours. Checked before anything is planned, allocated or run; both limits are
// options (ge.maxTensorElements, ge.maxWorkPerRun) with defaults no real model on a CPU nears.
#pragma once

#include <cstdint>

#include "ge/base/options.h"
#include "ge/base/status.h"
#include "ge/ir/graph.h"

namespace ge {

struct WorkLimits {
  int64_t max_tensor_elements = int64_t{1} << 34;
  int64_t max_work_per_run = int64_t{1} << 40;  // elements read and written, summed over nodes
  static Expected<WorkLimits> FromOptions(const Options& options);
};

// The graph's work: for every node, the elements of its inputs and outputs (static shapes; a
// measure of memory traffic that grows with every real cost). Saturates at INT64_MAX.
int64_t GraphWork(const Graph& graph);

// An error naming the first tensor over the element limit (node, output, shape) or the work
// against its limit, and the option that raises each.
Status CheckWorkLimits(const Graph& graph, const WorkLimits& limits);

}  // namespace ge
