// The model file (docs/export.md): a 64-byte header (magic, format version, payload size,
// checksum) and one ge.proto.ModelDef (csrc/proto/ge_model.proto); constants above a size go
// to a weights file beside it, memory-mapped at load. Reading treats both files as untrusted:
// every size, count, offset, dtype, shape and reference is checked before use, and the graph
// is verified. What the compiler does with the contents is compiler/offline_model's business.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ge/ir/graph.h"
#include "ge/symbolic/size_template.h"

namespace ge {

inline constexpr char kModelFileMagic[8] = {'T', 'G', 'E', 'M', 'O', 'D', 'E', 'L'};
inline constexpr uint32_t kModelFormatVersion = 1;
inline constexpr int64_t kModelHeaderBytes = 64;
// Constants larger than this go to the weights file (mapped at load, never copied).
inline constexpr int64_t kModelInlineConstantBytes = 64 * 1024;

// Where a task operand lives, as the memory plan put it (Placement, spelled for the file).
struct ModelOperand {
  std::string placement;  // "arena", "input", "output", "constant", "absent"
  int64_t offset = 0;
  int32_t io_index = -1;
  TensorDesc desc;
};

struct ModelTaskDesc {
  std::string name, type, engine;
  int64_t stream = 0;
  std::vector<ModelOperand> inputs, outputs, workspaces;
};

// The memory plan and task list the exporting process compiled.
struct ModelPlanDesc {
  int64_t arena_size = 0;
  int64_t const_bytes = 0;
  int32_t streams = 1;
  std::vector<ModelTaskDesc> tasks;
};

// The first way two plans differ ("task 3 (MatMulV2 'mm'): input 0 offset 128 vs 256"), or
// nullopt when they are the same.
std::optional<std::string> PlanDifference(const ModelPlanDesc& recorded, const ModelPlanDesc& derived);

struct ModelKernelDesc {
  std::string symbol, kernel_ir;
};

struct ModelFileContents {
  std::string engine_version;
  // The optimized graph; with `sizes`, the frontend's graph at some sizes (a size template).
  std::shared_ptr<Graph> graph;
  std::map<std::string, std::string> compile_options;
  std::vector<std::string> input_names, output_names;
  std::vector<ModelKernelDesc> kernels;
  ModelPlanDesc plan;
  std::optional<SizeTemplate> sizes;  // a model with symbolic sizes: no kernels or plan recorded
};

// Writes `path` and, when some constant is larger than `inline_limit`, `<path>.weights`.
Status WriteModelFile(const std::string& path, const ModelFileContents& contents,
                      int64_t inline_limit = kModelInlineConstantBytes);

// The whole model file in memory, every constant inline (compiled-graph caches).
Expected<std::string> EncodeModelFile(const ModelFileContents& contents);

// Maps a weights file by name (a plain file name from the model file, already checked).
struct MappedBytes {
  const char* data = nullptr;
  int64_t size = 0;
  std::shared_ptr<void> owner;  // keeps the mapping alive (constants point into it)
};
using WeightsOpener = std::function<Expected<MappedBytes>(const std::string& file_name)>;

// Parses a whole model file held in memory (what the fuzzer drives); `open_weights` is asked
// for the weights file when the model refers to one.
Expected<ModelFileContents> ParseModelFile(std::string_view bytes, const WeightsOpener& open_weights);

// The payload alone (a ModelDef), as ParseModelFile reads it once the header has checked out.
Expected<ModelFileContents> ParseModelPayload(std::string_view payload, const WeightsOpener& open_weights);

// Reads `path` (and its weights file, mapped).
Expected<ModelFileContents> ReadModelFile(const std::string& path);

}  // namespace ge
