// Stage "memory": where every value lives during a run, as a typed MemoryPlan that the task
// builder reads. The planner never writes the graph (the MemoryAware order search plans several
// schedules); AnnotateMemory writes the chosen plan onto the nodes for dumps only.
#pragma once

#include <unordered_map>
#include <unordered_set>

#include "ge/compiler/stream_assign.h"
#include "ge/ir/annotations.h"
#include "ge/ir/graph.h"
#include "ge/runtime/device.h"
#include "ge/runtime/fused_kernel_def.h"
#include "ge/runtime/model.h"

namespace ge {

struct MemoryPlan {
  std::vector<ValueInfo> values;  // every node output (by value id), then every workspace
  std::unordered_map<const Node*, std::vector<int32_t>> value_ids;      // per node, per output
  std::unordered_map<const Node*, std::vector<int32_t>> workspace_ids;  // per kernel node
  std::vector<int32_t> input_values;                                    // value id of each graph input
  std::vector<OutputSource> outputs;                                    // how each graph output is produced
  // Alias groups: nodes whose output is a zero-copy view of its input (no task runs them), and
  // nodes whose output takes the bytes of an input that dies there (node -> input index).
  std::unordered_set<const Node*> views;
  std::unordered_map<const Node*, int> written_over_input;
  // Assigns whose new value is computed in the graph input's own bytes (nothing to copy: no task).
  std::unordered_set<const Node*> updates_in_input;
  int64_t arena_size = 0;
  int64_t arena_lower_bound = 0;
  int64_t arena_no_reuse = 0;  // the arena if no two values shared bytes
  int64_t workspace_bytes = 0;
  int64_t const_bytes = 0;

  bool IsView(const Node* node) const { return views.count(node) != 0; }
  // Views and the Assigns whose value is already in the input's bytes: no kernel runs for them.
  bool RunsNoTask(const Node* node) const { return IsView(node) || updates_in_input.count(node) != 0; }
};

struct MemoryPlanOptions {
  bool reuse = true;  // ge.exec.disableReuseMemory=1 turns it off: every value gets bytes of its own
  // With the device's kernels: an op whose kernel WritesOverInput may take the bytes of an input
  // that dies at it, strided views where every reader's kernel takes them, and kernel workspaces.
  const KernelFactory* kernels = nullptr;
  const FusedKernelDefs* fused = nullptr;  // FusedKernel nodes: workspaces and producers' inputs
  // Several streams: a value's bytes are free only once every node that may run before its
  // last reader ends has been passed (StreamAssignment::LatestConcurrentStep), and an output is
  // written over an input (or an input updated in its bytes) only when every other reader
  // happens before the writer. Null: one stream, the schedule's order.
  const StreamAssignment* streams = nullptr;
};

// Plans in named phases over `schedule`:
//   1. NumberValues: a value per node output; pinned placements (graph inputs, constants, and the
//      outputs of ops updating a graph input in place).
//   2. PlaceGraphOutputs: graph outputs are written straight into the tensors handed back.
//      PlaceUpdatesInInputs: a new value that an Assign writes into a graph input is computed in
//      the input's memory when nothing reads the old value later (the Assign then runs no task).
//   3. FindLastUses: each value's last reader in the schedule.
//   4. ShareBytes: zero-copy views (reshapes; slices/selects that are one contiguous block, or
//      strided where every reader takes strides) and outputs written over a dying input. A graph
//      output that is a reshape of a computed value has that value computed in the output's
//      memory (ComputeViewedOutputsInPlace), so the reshape copies nothing.
//   5. PlaceArena: one buffer per alias group and per workspace, offsets from PlanArena.
class MemoryPlanner {
 public:
  MemoryPlanner(const Graph& graph, const std::vector<Node*>& schedule, MemoryPlanOptions options);
  Expected<MemoryPlan> Plan();

 private:
  Status NumberValues();
  void PlaceGraphOutputs();
  void PlaceUpdatesInInputs();
  bool MayStoreOver(const Node* producer, int output, Value ref) const;
  bool ElementwiseWritesOver(const Node* node, Value x) const;
  void FindLastUses();
  void ShareBytes();
  void ComputeViewedOutputsInPlace();
  void PlaceArena();

  bool TryView(const Node* node);
  bool StridedReadersAccept(const Node* node) const;
  void TryWriteOverInput(const Node* node);
  void Join(int32_t value, int32_t source, int64_t offset_in_source);
  int32_t GroupEnd(int32_t root) const;
  bool MultiStream() const;
  int32_t EndStep(const Node* reader) const;
  bool RunsBefore(const Node* a, const Node* b) const;
  bool OtherReadersRunBefore(int32_t root, const Node* writer) const;
  int32_t ValueOf(Value v) const;
  const FusedKernelDef* DefinitionOf(const Node* node) const;
  std::vector<TensorDesc> WorkspacesOf(const Node* node) const;

  const Graph& graph_;
  const std::vector<Node*>& schedule_;
  MemoryPlanOptions options_;
  MemoryPlan plan_;
  std::unordered_map<const Node*, int32_t> step_of_;
  std::vector<int32_t> root_of_;                     // alias group root of every value
  std::vector<int64_t> delta_;                       // byte offset of a value inside its root
  std::vector<int32_t> last_use_;                    // step of each value's last reader
  std::unordered_map<int32_t, int32_t> group_last_;  // root -> last use of any value of its group
};

Expected<MemoryPlan> PlanMemory(const Graph& graph, const std::vector<Node*>& schedule, MemoryPlanOptions options = {});

// Writes where every output lives (`_mem_offsets`, `_mem_sizes`, `_placement`, `_view`,
// `_inplace_input`, `_workspace_*`) for dumps and summaries. Nothing reads them back.
void AnnotateMemory(Graph& graph, const std::vector<Node*>& schedule, const MemoryPlan& plan);

}  // namespace ge
