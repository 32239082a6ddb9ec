#pragma once

#include <memory>

#include "ge/autofuse/autofuse_stage.h"
#include "ge/compiler/memory_plan.h"

namespace ge {

// Stage "tasks": one task per kernel-running node in schedule order, with its inputs and
// outputs resolved to value ids; the result is the immutable Model, which keeps the graph's
// generated-kernel library (if any) loaded. With several streams, each stream's program of
// waits, runs and records (a node that runs no task keeps its waits and records).
// `sizes_vary`: Model::sizes_vary.
Expected<std::shared_ptr<const Model>> BuildModel(const Graph& graph, const std::vector<Node*>& schedule,
                                                  MemoryPlan plan, const autofuse::AutofuseResult& fused = {},
                                                  const StreamAssignment* streams = nullptr, bool sizes_vary = false);

}  // namespace ge
