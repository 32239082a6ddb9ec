// Offline models (docs/export.md): ExportModel compiles a graph and writes a model file;
// LoadModel reads one back -- the untrusted file checked field by field, its graph verified,
// its kernels and memory plan derived again and compared with what the file records -- and
// returns a model that runs without any framework (ge_run, examples/cpp/run_model.cc).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "ge/base/options.h"
#include "ge/compiler/graph_compiler.h"
#include "ge/ir/graph.h"
#include "ge/runtime/model.h"
#include "ge/serialize/model_file.h"

namespace ge {

class SinkExecutor;

struct ExportInfo {
  std::vector<std::string> input_names;   // per graph input (Data index order): the frontend's names
  std::vector<std::string> output_names;  // per graph output
};

struct ExportReport {
  int64_t tasks = 0;
  int64_t kernels = 0;  // generated kernels, as kernel IR in the file
  int64_t arena_bytes = 0;
  int64_t const_bytes = 0;
  double compile_ms = 0;
};

// A graph compiled with the options a session would use: GEInitialize's, then `options`, then the
// environment, then `plan` (a model file's plan options) over all of them.
struct DeviceCompile {
  CompiledGraph graph;
  std::shared_ptr<Device> device;
  Options options;         // the effective options
  CompileOptions compile;  // as resolved from them (e.g. the stream count)
};
Expected<DeviceCompile> CompileForDevice(Graph& graph, const Options& options, CompileScope scope,
                                         const Options& plan = {}, uint32_t graph_id = 0,
                                         std::unordered_set<std::string> size_dependent = {});
// The executor of a compiled model, warmed up (load errors surface here).
Expected<std::shared_ptr<SinkExecutor>> MakeExecutor(std::shared_ptr<const Model> model, std::shared_ptr<Device> device,
                                                     const Options& options, uint32_t graph_id);

// A graph compiled as a model file describes it: the file's contents (the optimized graph, kernel
// IR, plan) and the compiled result that runs here. What Session and OfflineModel are made of.
struct CompiledModel {
  ModelFileContents file;
  CompiledGraph compiled;
  std::shared_ptr<Graph> runtime_graph;  // the graph the model was compiled from (annotated; dumps)
  std::shared_ptr<Device> device;
  Options options;  // effective: global, then given, then environment, then the file's plan options
  bool plan_checked = false;
};

// Optimizes `graph`, then compiles a copy built as a model file's reader builds it, so the
// recorded plan is the one a loader derives. GEInitialize first. `graph_id` names dumps and profiles.
Expected<CompiledModel> CompileToModel(std::unique_ptr<Graph> graph, const Options& options, const ExportInfo& info,
                                       uint32_t graph_id = 0);
// A model file's contents, checked against what they record (see LoadModel).
Expected<CompiledModel> CompileModelFile(ModelFileContents file, const Options& options, uint32_t graph_id = 0);

// Compiles `graph` (GEInitialize first; `options` as for Session::AddGraph) and writes `path`
// (plus `<path>.weights` when a constant is larger than 64 KiB).
Expected<ExportReport> ExportModel(std::unique_ptr<Graph> graph, const Options& options, const std::string& path,
                                   const ExportInfo& info = {});
// A size template's graph for the sizes `values`, optimized (prepare, the optimizer, copy insertion):
// what an instance compiled from an optimized template starts from (Session::AddOptimizedGraph).
// Nodes that hold a size site, and everything computed from them, are not constant-folded, so
// that the graphs optimized at two sizes stay one graph whose sizes differ only in integers (the
// frontend derives the optimized template's sites from two of them, docs/dynamic_shapes.md).
Expected<std::unique_ptr<Graph>> OptimizeInstance(const Graph& graph, const SizeTemplate& sizes,
                                                  const std::vector<int64_t>& values, const Options& options);

// A model with symbolic sizes: the size template (`graph` at some sizes, `sizes` its sites) is
// written as it is; the instance for `example` (symbol values) is compiled first, to check
// that it compiles and to resolve the plan options. The report is that instance's.
Expected<ExportReport> ExportSizeTemplate(const Graph& graph, const SizeTemplate& sizes,
                                          const std::vector<int64_t>& example, const Options& options,
                                          const std::string& path, const ExportInfo& info = {});

class OfflineModel {
 public:
  // Thread-safe, like Session::RunGraph: inputs in input_descs() order, outputs allocated. A
  // model with symbolic sizes reads them from the inputs' shapes (checked against the ranges and
  // guards it was exported under) and compiles an instance on the first call with them.
  Status Run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) const;
  // With symbolic sizes, their dims are -1 (outputs: every dim; they are known per call).
  const std::vector<TensorDesc>& input_descs() const { return input_descs_; }
  const std::vector<TensorDesc>& output_descs() const { return output_descs_; }
  const std::vector<std::string>& input_names() const { return input_names_; }
  const std::vector<std::string>& output_names() const { return output_names_; }
  // The compiled model; of a model with symbolic sizes, the most recently compiled instance's
  // (nullptr before the first call).
  std::shared_ptr<const Model> model() const;
  bool dynamic() const { return sizes_ != nullptr; }
  // "s0 = input 0 dim 1 in [2, 512]" per symbol (empty for a static model).
  std::vector<std::string> DescribeSymbols() const;
  size_t num_instances() const;
  // Per instance compiled so far, in order: how many candidate execution orders its memory
  // stage planned (MemoryAware: every one for the first instance, then the order it kept).
  std::vector<int> orders_planned() const;
  // Whether the file's recorded plan was checked against the derived one (false when the file
  // comes from another engine version, generated kernels were unavailable here, or the model
  // has symbolic sizes: its plan depends on them and is always derived).
  bool plan_checked() const { return plan_checked_; }
  double load_ms() const { return load_ms_; }

 private:
  friend Expected<std::shared_ptr<OfflineModel>> LoadModel(const std::string& path, const Options& options);
  struct Instance {
    std::shared_ptr<const Model> model;
    std::shared_ptr<SinkExecutor> executor;
    uint64_t last_use = 0;
  };
  Expected<std::shared_ptr<SinkExecutor>> InstanceFor(const std::vector<int64_t>& sizes) const;
  Options InstanceOptions() const;  // mutex_ held; OptionsForLaterInstance (schedule.h)

  std::shared_ptr<const Model> model_;  // static
  std::shared_ptr<SinkExecutor> executor_;
  std::shared_ptr<const ModelFileContents> sizes_;  // symbolic: the template (graph, sizes, plan options)
  std::optional<SymbolReader> symbols_;             // symbolic: reads and checks each call's sizes
  Options options_;                                 // symbolic: what instances are compiled with
  mutable std::mutex mutex_;                        // guards instances_ and use_clock_
  mutable std::map<std::vector<int64_t>, Instance> instances_;
  mutable uint64_t use_clock_ = 0;
  // The order the first instance's memory stage kept: later instances differ only in sizes and
  // schedule in it instead of planning every candidate order again (InstanceOptions).
  mutable std::optional<TopoStrategy> instance_order_;
  mutable std::vector<int> orders_planned_;
  std::vector<TensorDesc> input_descs_, output_descs_;
  std::vector<std::string> input_names_, output_names_;
  bool plan_checked_ = false;
  double load_ms_ = 0;
};

// `options`: the machine-local ones (kernel compiler and cache, dumps, profiling, stream
// replay); the options that shape the plan come from the file.
Expected<std::shared_ptr<OfflineModel>> LoadModel(const std::string& path, const Options& options = {});

}  // namespace ge
