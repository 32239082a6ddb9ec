#include "ge/offline_model.h"

#include <chrono>

#include "ge/base/logging.h"
#include "ge/base/version.h"
#include "ge/compiler/graph_compiler.h"
#include "ge/compiler/schedule.h"
#include "ge/runtime/sink_executor.h"
#include "ge/serialize/model_file.h"
#include "ge/session.h"

namespace ge {
namespace {

// The options that shape the optimized graph's kernels and plan: the file keeps them and the
// loader uses them, whatever the loading process says. Everything else is machine-local.
constexpr const char* kPlanOptions[] = {
    option::kTopoSortingMode,     option::kDisableReuseMemory, option::kEnableSingleStream,  option::kComputeStreams,
    option::kStreamMinBranchWork, option::kAutofuse,           option::kStaticKernelCompile, option::kKernelFastMath,
    option::kKernelCodegen,       option::kKernelRunTimeSizes,
};

bool IsPlanOption(const std::string& key) {
  for (const char* k : kPlanOptions)
    if (key == k) return true;
  return false;
}

Expected<std::map<std::string, std::string>> PlanOptionsOf(const DeviceCompile& optimized) {
  const Options& merged = optimized.options;
  const CompileOptions& compile = optimized.compile;
  std::map<std::string, std::string> out;
  for (const char* key : kPlanOptions) {
    GE_ASSIGN_OR_RETURN(out[key], OptionValue(merged, key));
  }
  // Resolved here: its default is the exporting machine's core count.
  out[option::kComputeStreams] = std::to_string(compile.streams.compute_streams);
  return out;
}

const char* PlacementName(Placement placement) {
  switch (placement) {
    case Placement::kArena: return "arena";
    case Placement::kInput: return "input";
    case Placement::kOutput: return "output";
    case Placement::kConstant: return "constant";
  }
  return "?";
}

ModelOperand Operand(const Model& model, int32_t value) {
  if (value < 0) return {"absent", 0, -1, {}};
  const ValueInfo& v = model.values.at(static_cast<size_t>(value));
  // A constant's offset is where its bytes happen to be in this process: not part of the plan.
  const int64_t offset = v.placement == Placement::kConstant ? 0 : v.offset;
  return {PlacementName(v.placement), offset, v.io_index, v.desc};
}

ModelPlanDesc DescribePlan(const Model& model) {
  ModelPlanDesc plan;
  plan.arena_size = model.arena_size;
  plan.const_bytes = model.const_bytes;
  plan.streams = std::max<int32_t>(1, static_cast<int32_t>(model.stream_program.streams.size()));
  for (const TaskDef& task : model.tasks) {
    ModelTaskDesc t{task.name, task.type, task.engine, task.stream, {}, {}, {}};
    for (int32_t v : task.inputs) t.inputs.push_back(Operand(model, v));
    for (int32_t v : task.outputs) t.outputs.push_back(Operand(model, v));
    for (int32_t v : task.workspaces) t.workspaces.push_back(Operand(model, v));
    plan.tasks.push_back(std::move(t));
  }
  return plan;
}

std::vector<ModelKernelDesc> DescribeKernels(const Model& model) {
  std::vector<ModelKernelDesc> out;
  for (const TaskDef& task : model.tasks)
    if (task.fused_kernel) out.push_back({task.fused_kernel->symbol, task.fused_kernel->kernel_ir});
  return out;
}

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The loaded graph's kernels and plan against the file's record.
Expected<bool> CheckAgainstRecord(const ModelFileContents& file, const CompiledGraph& compiled) {
  if (!compiled.autofuse.fallback.empty()) {
    GE_LOGW(
        "model file: generated kernels are unavailable here ({}); its graph runs on library kernels and its "
        "recorded plan is not checked",
        compiled.autofuse.fallback);
    return false;
  }
  if (file.engine_version != kEngineVersion) {
    GE_LOGW("model file from engine version {} (this is {}): kernels and plan derived again, not checked",
            file.engine_version, kEngineVersion);
    return false;
  }
  const std::vector<ModelKernelDesc> kernels = DescribeKernels(*compiled.model);
  GE_CHECK(kernels.size() == file.kernels.size(), "model file records {} generated kernels, its graph makes {}",
           file.kernels.size(), kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k)
    GE_CHECK(kernels[k].symbol == file.kernels[k].symbol && kernels[k].kernel_ir == file.kernels[k].kernel_ir,
             "model file's kernel IR of '{}' is not what its graph makes:\n{}\nvs\n{}", file.kernels[k].symbol,
             file.kernels[k].kernel_ir, kernels[k].kernel_ir);
  if (auto difference = PlanDifference(file.plan, DescribePlan(*compiled.model)))
    return InvalidArgument("model file's recorded plan is not the plan of its graph: {}", *difference);
  return true;
}

Expected<Options> PlanOptionsFrom(const ModelFileContents& file) {
  Options options(file.compile_options.begin(), file.compile_options.end());
  for (const auto& [key, value] : options)
    GE_CHECK(IsPlanOption(key), "model file records option '{}', which is not one that shapes a plan", key);
  GE_RETURN_IF_ERROR(ValidateOptions(options).WithContext("model file options"));
  return options;
}

}  // namespace

Expected<CompiledModel> CompileToModel(std::unique_ptr<Graph> graph, const Options& options, const ExportInfo& info,
                                       uint32_t graph_id) {
  GE_CHECK(graph != nullptr, "CompileToModel: graph is null");
  GE_ASSIGN_OR_RETURN(DeviceCompile optimized,
                      CompileForDevice(*graph, options, CompileScope::kOptimizeOnly, {}, graph_id));
  CompiledModel out;
  out.file.engine_version = kEngineVersion;
  GE_ASSIGN_OR_RETURN(out.file.compile_options, PlanOptionsOf(optimized));
  GE_ASSIGN_OR_RETURN(std::unique_ptr<Graph> copy, CloneGraph(*graph));
  const Options plan(out.file.compile_options.begin(), out.file.compile_options.end());
  GE_ASSIGN_OR_RETURN(DeviceCompile compiled,
                      CompileForDevice(*copy, options, CompileScope::kFromOptimized, plan, graph_id));
  out.file.graph = std::move(graph);
  out.file.input_names = info.input_names;
  out.file.output_names = info.output_names;
  out.file.kernels = DescribeKernels(*compiled.graph.model);
  out.file.plan = DescribePlan(*compiled.graph.model);
  out.compiled = std::move(compiled.graph);
  out.runtime_graph = std::move(copy);
  out.device = std::move(compiled.device);
  out.options = std::move(compiled.options);
  out.plan_checked = true;
  return out;
}

Expected<CompiledModel> CompileModelFile(ModelFileContents file, const Options& options, uint32_t graph_id) {
  GE_ASSIGN_OR_RETURN(const Options plan, PlanOptionsFrom(file));
  GE_ASSIGN_OR_RETURN(DeviceCompile compiled,
                      CompileForDevice(*file.graph, options, CompileScope::kFromOptimized, plan, graph_id));
  GE_ASSIGN_OR_RETURN(bool checked, CheckAgainstRecord(file, compiled.graph));
  CompiledModel out;
  out.runtime_graph = file.graph;  // compiled in place
  out.file = std::move(file);
  out.compiled = std::move(compiled.graph);
  out.device = std::move(compiled.device);
  out.options = std::move(compiled.options);
  out.plan_checked = checked;
  return out;
}

Expected<DeviceCompile> CompileForDevice(Graph& graph, const Options& options, CompileScope scope, const Options& plan,
                                         uint32_t graph_id, std::unordered_set<std::string> size_dependent) {
  GE_CHECK(GEIsInitialized(), "GEInitialize has not been called");
  GE_RETURN_IF_ERROR(ValidateOptions(options));
  DeviceCompile out;
  GE_ASSIGN_OR_RETURN(out.options, EffectiveOptions(options));
  for (const auto& [key, value] : plan) out.options[key] = value;
  GE_ASSIGN_OR_RETURN(const std::string device_name, OptionValue(out.options, option::kDevice));
  GE_ASSIGN_OR_RETURN(out.device, DeviceRegistry::Get(device_name));
  GE_ASSIGN_OR_RETURN(out.compile, CompileOptions::FromOptions(out.options, graph_id));
  out.compile.scope = scope;
  out.compile.size_dependent = std::move(size_dependent);
  GE_ASSIGN_OR_RETURN(out.graph, CompileGraph(graph, *out.device, out.compile));
  return out;
}

Expected<std::shared_ptr<SinkExecutor>> MakeExecutor(std::shared_ptr<const Model> model, std::shared_ptr<Device> device,
                                                     const Options& options, uint32_t graph_id) {
  GE_ASSIGN_OR_RETURN(auto debug, RunDebugOptions::FromOptions(options, graph_id));
  GE_ASSIGN_OR_RETURN(const std::string replay, OptionValue(options, option::kStreamReplay));
  auto executor = std::make_shared<SinkExecutor>(
      std::move(model), std::move(device), std::move(debug),
      replay == "always" ? SinkExecutor::StreamReplay::kAlways : SinkExecutor::StreamReplay::kAuto);
  GE_RETURN_IF_ERROR(executor->Warmup());
  return executor;
}

Expected<ExportReport> ExportModel(std::unique_ptr<Graph> graph, const Options& options, const std::string& path,
                                   const ExportInfo& info) {
  const auto start = std::chrono::steady_clock::now();
  GE_ASSIGN_OR_RETURN(CompiledModel model, CompileToModel(std::move(graph), options, info));
  GE_RETURN_IF_ERROR(WriteModelFile(path, model.file).WithContext(fmt::format("exporting to '{}'", path)));
  const Model& m = *model.compiled.model;
  return ExportReport{static_cast<int64_t>(m.tasks.size()), static_cast<int64_t>(model.file.kernels.size()),
                      m.arena_size, m.const_bytes, MillisecondsSince(start)};
}

Expected<std::unique_ptr<Graph>> OptimizeInstance(const Graph& graph, const SizeTemplate& sizes,
                                                  const std::vector<int64_t>& values, const Options& options) {
  GE_ASSIGN_OR_RETURN(std::unique_ptr<Graph> instance, Instantiate(graph, sizes, values));
  std::unordered_set<std::string> site_nodes;
  for (const SizeSite& site : sizes.sites) site_nodes.insert(site.node);
  GE_RETURN_IF_ERROR(
      CompileForDevice(*instance, options, CompileScope::kOptimizeOnly, {}, 0, std::move(site_nodes)).status());
  return instance;
}

Expected<ExportReport> ExportSizeTemplate(const Graph& graph, const SizeTemplate& sizes,
                                          const std::vector<int64_t>& example, const Options& options,
                                          const std::string& path, const ExportInfo& info) {
  const auto start = std::chrono::steady_clock::now();
  GE_RETURN_IF_ERROR(sizes.Verify(graph));
  for (const SymbolDef& s : sizes.symbols)  // a runner reads every symbol from its inputs' shapes
    GE_CHECK(s.input >= 0,
             "symbol {} is not a size of any tensor input, so a caller of the model file could not give it", s.name);
  GE_ASSIGN_OR_RETURN(std::unique_ptr<Graph> instance, Instantiate(graph, sizes, example));
  GE_ASSIGN_OR_RETURN(DeviceCompile compiled, CompileForDevice(*instance, options, CompileScope::kWhole));
  ModelFileContents file;
  file.engine_version = kEngineVersion;
  GE_ASSIGN_OR_RETURN(file.compile_options, PlanOptionsOf(compiled));
  GE_ASSIGN_OR_RETURN(file.graph, CloneGraph(graph));
  file.input_names = info.input_names;
  file.output_names = info.output_names;
  file.sizes = sizes;
  GE_RETURN_IF_ERROR(WriteModelFile(path, file).WithContext(fmt::format("exporting to '{}'", path)));
  const Model& m = *compiled.graph.model;
  int64_t kernels = 0;
  for (const TaskDef& task : m.tasks) kernels += task.fused_kernel ? 1 : 0;
  return ExportReport{static_cast<int64_t>(m.tasks.size()), kernels, m.arena_size, m.const_bytes,
                      MillisecondsSince(start)};
}

namespace {

// A model's descs with every dim of a symbolic input -1 (GE's unknown dim), outputs all -1.
std::vector<TensorDesc> SymbolicInputDescs(const ModelFileContents& file) {
  std::vector<TensorDesc> out;
  for (const Node* data : file.graph->DataNodes()) {
    TensorDesc desc = data->output_desc(0);
    for (const SizeSite& site : file.sizes->sites)
      if (site.kind == SizeSiteKind::kInputDim && site.node == data->name())
        desc.shape[static_cast<size_t>(site.index)] = kUnknownDim;
    desc.origin_shape = desc.shape;
    out.push_back(std::move(desc));
  }
  return out;
}

std::vector<TensorDesc> UnknownOutputDescs(const Graph& graph) {
  std::vector<TensorDesc> out;
  const Node* net_output = graph.NetOutputNode();
  for (const Value& v : net_output->inputs()) {
    const TensorDesc& known = v.node->output_desc(v.index);
    out.emplace_back(known.dtype, Shape(known.shape.size(), kUnknownDim), known.format);
  }
  return out;
}

// Instances of a model with symbolic sizes kept compiled; the least recently used go first.
constexpr size_t kMaxModelInstances = 16;

}  // namespace

Expected<std::shared_ptr<OfflineModel>> LoadModel(const std::string& path, const Options& options) {
  const auto start = std::chrono::steady_clock::now();
  GE_ASSIGN_OR_RETURN(ModelFileContents file, ReadModelFile(path));
  auto context = [&path](const Status& st) { return st.WithContext(fmt::format("loading model '{}'", path)); };
  auto model = std::make_shared<OfflineModel>();
  model->input_names_ = file.input_names;
  model->output_names_ = file.output_names;
  if (file.sizes) {
    auto plan = PlanOptionsFrom(file);
    if (!plan.ok()) return context(plan.status());
    model->options_ = options;
    for (const auto& [key, value] : *plan) model->options_[key] = value;
    GE_RETURN_IF_ERROR(context(ValidateOptions(model->options_)));
    model->input_descs_ = SymbolicInputDescs(file);
    model->output_descs_ = UnknownOutputDescs(*file.graph);
    model->sizes_ = std::make_shared<const ModelFileContents>(std::move(file));
    model->symbols_.emplace(*model->sizes_->graph, *model->sizes_->sizes);
    model->load_ms_ = MillisecondsSince(start);
    return model;
  }
  auto compiled = CompileModelFile(std::move(file), options);
  if (!compiled.ok()) return context(compiled.status());
  auto executor = MakeExecutor(compiled->compiled.model, compiled->device, compiled->options, 0);
  if (!executor.ok()) return context(executor.status());
  model->model_ = compiled->compiled.model;
  model->executor_ = std::move(executor).value();
  model->plan_checked_ = compiled->plan_checked;
  model->input_descs_ = model->model_->input_descs;
  model->output_descs_ = model->model_->output_descs;
  model->load_ms_ = MillisecondsSince(start);
  return model;
}

Status OfflineModel::Run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) const {
  if (!sizes_) return executor_->Run(inputs, outputs);
  std::vector<Shape> shapes;
  for (const Tensor& t : inputs) shapes.push_back(t.desc().shape);
  GE_ASSIGN_OR_RETURN(std::vector<int64_t> values, symbols_->Read(shapes));
  GE_ASSIGN_OR_RETURN(std::shared_ptr<SinkExecutor> executor, InstanceFor(values));
  return executor->Run(inputs, outputs);
}

Expected<std::shared_ptr<SinkExecutor>> OfflineModel::InstanceFor(const std::vector<int64_t>& sizes) const {
  std::lock_guard<std::mutex> lock(mutex_);  // one compile at a time; runs are not serialized
  auto it = instances_.find(sizes);
  if (it == instances_.end()) {
    GE_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, Instantiate(*sizes_->graph, *sizes_->sizes, sizes));
    GE_ASSIGN_OR_RETURN(DeviceCompile compiled, CompileForDevice(*graph, InstanceOptions(), CompileScope::kWhole));
    GE_ASSIGN_OR_RETURN(auto executor, MakeExecutor(compiled.graph.model, compiled.device, compiled.options, 0));
    if (!instance_order_) instance_order_ = compiled.graph.schedule;
    orders_planned_.push_back(compiled.graph.orders_planned);
    if (instances_.size() >= kMaxModelInstances) {
      auto oldest = instances_.begin();
      for (auto i = instances_.begin(); i != instances_.end(); ++i)
        if (i->second.last_use < oldest->second.last_use) oldest = i;
      instances_.erase(oldest);
    }
    it = instances_.emplace(sizes, Instance{compiled.graph.model, std::move(executor), 0}).first;
  }
  it->second.last_use = ++use_clock_;
  return it->second.executor;
}

Options OfflineModel::InstanceOptions() const {
  return instance_order_ ? OptionsForLaterInstance(options_, *instance_order_) : options_;
}

std::shared_ptr<const Model> OfflineModel::model() const {
  if (!sizes_) return model_;
  std::lock_guard<std::mutex> lock(mutex_);
  const Instance* newest = nullptr;
  for (const auto& [key, instance] : instances_)
    if (newest == nullptr || instance.last_use > newest->last_use) newest = &instance;
  return newest ? newest->model : nullptr;
}

std::vector<std::string> OfflineModel::DescribeSymbols() const {
  std::vector<std::string> out;
  if (!sizes_) return out;
  for (const SymbolDef& s : sizes_->sizes->symbols)
    out.push_back(fmt::format("{} = input {} dim {} in [{}, {}]", s.name, s.input, s.dim, s.min,
                              s.max == INT64_MAX ? std::string("inf") : std::to_string(s.max)));
  const std::vector<std::string> names = sizes_->sizes->SymbolNames();
  for (const SymExpr& guard : sizes_->sizes->guards) out.push_back("where " + guard.ToString(names));
  return out;
}

size_t OfflineModel::num_instances() const {
  if (!sizes_) return 1;
  std::lock_guard<std::mutex> lock(mutex_);
  return instances_.size();
}

std::vector<int> OfflineModel::orders_planned() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return orders_planned_;
}

}  // namespace ge
