#pragma once

#include <unordered_map>

#include "ge/ir/annotations.h"
#include "ge/ir/graph.h"
#include "ge/runtime/device.h"
#include "ge/runtime/fused_kernel_def.h"
#include "ge/runtime/model.h"

namespace ge {

// Every node output becomes a value with a placement; arena values get offsets from the
// planner over the final schedule.
struct MemoryLayout {
  std::vector<ValueInfo> values;
  std::unordered_map<const Node*, std::vector<int32_t>> value_ids;  // per node, per output
  std::vector<int32_t> input_values;
  std::vector<OutputSource> outputs;
  int64_t arena_size = 0;
  int64_t arena_lower_bound = 0;
  int64_t arena_no_reuse = 0;  // the arena if no two values shared bytes
  int64_t view_values = 0;     // values that are zero-copy views of another value's bytes
  int64_t inplace_values = 0;  // elementwise outputs written over an input that dies there
  std::unordered_map<const Node*, std::vector<int32_t>> workspace_ids;  // per kernel node (KernelFactory::Workspaces)
  int64_t workspace_bytes = 0;
  int64_t const_bytes = 0;
};


// Stage "memory". Pinned (never in the arena): graph inputs (read in place), constants, and
// graph outputs (written straight into the tensors handed back to the caller). Reshapes,
// flattens, identities and slices/selects that take one contiguous block become zero-copy views
// of their input (attr `_view`; no task; see ViewByteOffset) when reuse is on and neither side
// is updated in place or is a graph output.
// With `kernels`, an op whose kernel WritesOverInput may take the bytes of an input that dies at
// it, and every workspace a kernel asks for is an arena value live only at its task.
// `fused` describes FusedKernel nodes: their workspaces (producer outputs) and which inputs go
// to a producer (strided views are asked of the producer's kernel).
Expected<MemoryLayout> AssignMemory(Graph& graph, const std::vector<Node*>& schedule, bool reuse = true,
                                    const KernelFactory* kernels = nullptr, const FusedKernelDefs* fused = nullptr);

}  // namespace ge
