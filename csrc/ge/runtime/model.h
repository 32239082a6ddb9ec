// Model: the immutable result of compiling a graph. Holds no device state, so one Model can
// back many concurrent runs (each with its own DeviceProgram).
#pragma once

#include <string>
#include <vector>

#include <memory>

#include "ge/ir/attr.h"
#include "ge/runtime/fused_kernel_def.h"
#include "ge/runtime/kernel_library.h"

namespace ge {

// Where a value's bytes live while a run executes.
enum class Placement : uint8_t {
  kArena,     // `offset` bytes into the run's arena
  kInput,     // the caller's input tensor number `io_index`, read in place from byte `offset`
  kOutput,    // an output tensor allocated per run and handed to the caller, number `io_index`
  kConstant,  // `constant`, owned by the model (a view's `constant` points into its root's bytes)
};

struct ValueInfo {
  TensorDesc desc;
  Placement placement = Placement::kArena;
  int64_t offset = 0;
  std::vector<int64_t> strides;  // element strides of a strided view (a column, a stepped slice); empty: dense
  int32_t io_index = -1;
  Tensor constant;
  std::string producer;  // node name, for messages
};

struct TaskDef {
  std::string name;
  std::string type;
  std::string engine;  // native / host_fallback (for profiles)
  int64_t stream = 0;
  std::string fx_node;  // the FX node it came from, when known (for profiles and accuracy compare)
  AttrMap attrs;
  std::vector<int32_t> inputs;                         // value ids; -1 for an absent optional input
  std::vector<int32_t> outputs;                        // value ids
  std::vector<bool> output_used;                       // kernels may skip outputs nobody reads
  std::vector<int32_t> workspaces;                     // value ids of the scratch tensors the kernel asked for (arena)
  std::shared_ptr<const FusedKernelDef> fused_kernel;  // FusedKernel tasks: what auto-fusion made
};

// How graph output k is produced.
struct OutputSource {
  enum class Kind : uint8_t { kComputed, kInput, kConstant, kDuplicate };
  Kind kind;
  int32_t index;  // value id (kComputed, kConstant), input number (kInput), earlier output (kDuplicate)
};

// One step of a stream's program: wait for an event, run a task, or record an event.
struct StreamStep {
  enum class Kind : uint8_t { kWait, kRun, kRecord };
  Kind kind;
  int32_t index;  // task index (kRun) or event id
};

// How the tasks run on several streams (compiler/stream_assign.h). The tasks in `Model::tasks`
// order are also a valid one-stream run of the same plan (the memory plan holds for any order
// the events allow, and that order is one of them).
struct StreamProgram {
  std::vector<std::vector<StreamStep>> streams;  // per stream; empty: one stream
  std::vector<std::string> names;                // per stream, for traces ("compute 1", "communication")
  int32_t num_events = 0;
  bool multi() const { return streams.size() > 1; }
};

struct Model {
  std::string graph_name;
  std::vector<ValueInfo> values;
  std::vector<TaskDef> tasks;         // in execution order
  std::vector<int32_t> input_values;  // value id of each graph input
  std::vector<TensorDesc> input_descs;
  std::vector<OutputSource> outputs;
  std::vector<TensorDesc> output_descs;
  int64_t arena_size = 0;
  int64_t arena_lower_bound = 0;  // the largest sum of arena bytes live at one step
  int64_t arena_no_reuse = 0;     // the arena if no two values shared bytes
  int64_t view_values = 0;        // values read as zero-copy views of another value
  int64_t inplace_values = 0;     // elementwise outputs written over a dying input
  int64_t updates_in_input = 0;   // graph-input updates computed in the input's bytes (no copy)
  int64_t workspace_bytes = 0;    // scratch requested by kernels (planned in the arena)
  int64_t const_bytes = 0;
  std::shared_ptr<const KernelLibrary> kernel_library;  // generated kernels (FusedKernel tasks); may be null
  // One instance of a graph whose sizes vary (ge.kernelRunTimeSizes): other instances of it will
  // have other sizes, so a device decides what depends on sizes per size class, not per size.
  bool sizes_vary = false;
  StreamProgram stream_program;
};

}  // namespace ge
