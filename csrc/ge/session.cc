#include "ge/session.h"

#include <atomic>

#include "ge/runtime/sink_executor.h"

namespace ge {
namespace {

struct GlobalState {
  std::mutex mu;
  std::atomic<bool> initialized{false};  // read on every run: no lock
  Options options;
};

GlobalState& Global() {
  static GlobalState state;
  return state;
}

}  // namespace

Status GEInitialize(const Options& options) {
  GE_RETURN_IF_ERROR(ValidateOptions(options).WithContext("GEInitialize"));
  GE_ASSIGN_OR_RETURN(const std::string device, OptionValue(options, option::kDevice));
  GE_RETURN_IF_ERROR(DeviceRegistry::Get(device).status());
  std::lock_guard<std::mutex> lock(Global().mu);
  Global().initialized = true;
  Global().options = options;
  return {};
}

Status GEFinalize() {
  std::lock_guard<std::mutex> lock(Global().mu);
  Global().initialized = false;
  return {};
}

bool GEIsInitialized() { return Global().initialized.load(std::memory_order_acquire); }

Expected<Options> EffectiveOptions(const Options& options) {
  Options merged;
  {
    std::lock_guard<std::mutex> lock(Global().mu);
    merged = Global().options;
  }
  for (const auto& [k, v] : options) merged[k] = v;
  return WithEnvironment(std::move(merged));
}

struct Session::Entry {
  std::mutex compile_mu;  // one compilation at a time per graph
  std::shared_ptr<Graph> graph;
  Options options;
  CompileScope scope = CompileScope::kWhole;  // AddOptimizedGraph: kFromOptimized
  std::shared_ptr<SinkExecutor> executor;     // set once compiled; read with std::atomic_load (no lock per run)
  CompiledGraphSummary summary;
};

Session::Session(Options options) : options_(std::move(options)) {}
Session::~Session() = default;

Expected<std::shared_ptr<Session::Entry>> Session::Find(uint32_t graph_id) const {
  if (!GEIsInitialized()) return FailedPrecondition("GEInitialize has not been called");
  std::lock_guard<std::mutex> lock(mu_);
  auto it = graphs_.find(graph_id);
  if (it == graphs_.end()) return NotFound("graph {} was not added to this session", graph_id);
  return it->second;
}

Status Session::AddGraph(uint32_t graph_id, std::unique_ptr<Graph> graph, const Options& options) {
  return Add(graph_id, std::move(graph), options, CompileScope::kWhole);
}

Status Session::AddOptimizedGraph(uint32_t graph_id, std::unique_ptr<Graph> graph, const Options& options) {
  return Add(graph_id, std::move(graph), options, CompileScope::kFromOptimized);
}

Status Session::Add(uint32_t graph_id, std::unique_ptr<Graph> graph, const Options& options, CompileScope scope) {
  GE_CHECK(GEIsInitialized(), "GEInitialize has not been called");
  GE_CHECK(graph != nullptr, "AddGraph({}): graph is null", graph_id);
  GE_RETURN_IF_ERROR(ValidateOptions(options_).WithContext("session options"));
  GE_RETURN_IF_ERROR(ValidateOptions(options).WithContext(fmt::format("AddGraph({}) options", graph_id)));
  auto entry = NewEntry(options);
  entry->graph = std::move(graph);
  entry->scope = scope;
  return Insert(graph_id, std::move(entry));
}

std::shared_ptr<Session::Entry> Session::NewEntry(const Options& options) const {
  auto entry = std::make_shared<Entry>();
  entry->options = options_;
  for (const auto& [k, v] : options) entry->options[k] = v;  // graph options override session options
  return entry;
}

Status Session::Insert(uint32_t graph_id, std::shared_ptr<Entry> entry) {
  std::lock_guard<std::mutex> lock(mu_);
  GE_CHECK(graphs_.emplace(graph_id, std::move(entry)).second, "graph {} is already in this session", graph_id);
  return {};
}

namespace {

void FillSummary(const CompiledGraph& compiled, CompiledGraphSummary* summary) {
  const Model& m = *compiled.model;
  CompiledGraphSummary& s = *summary;
  s.const_memory_size = m.const_bytes;
  s.feature_memory_size = m.arena_size;
  s.arena_lower_bound = m.arena_lower_bound;
  s.arena_no_reuse = m.arena_no_reuse;
  s.view_values = m.view_values;
  s.inplace_values = m.inplace_values;
  s.updates_in_input = m.updates_in_input;
  s.workspace_bytes = m.workspace_bytes;
  s.task_num = static_cast<int64_t>(m.tasks.size());
  s.stream_num = std::max<int64_t>(1, static_cast<int64_t>(m.stream_program.streams.size()));
  s.input_descs = m.input_descs;
  s.output_descs = m.output_descs;
  s.engine_counts = compiled.engine_counts;
  s.stages = compiled.stages;
  s.fused_groups = compiled.fused_groups;
  s.schedule = std::string(TopoStrategyName(compiled.schedule));
  s.orders_planned = compiled.orders_planned;
  s.autofuse = compiled.autofuse;
  s.passes = compiled.passes;
}

}  // namespace

Status Session::CompileGraph(uint32_t graph_id) {
  GE_ASSIGN_OR_RETURN(auto entry, Find(graph_id));
  std::lock_guard<std::mutex> lock(entry->compile_mu);
  if (std::atomic_load(&entry->executor)) return {};
  GE_ASSIGN_OR_RETURN(DeviceCompile compiled,
                      CompileForDevice(*entry->graph, entry->options, entry->scope, {}, graph_id));
  auto executor = MakeExecutor(compiled.graph.model, compiled.device, compiled.options, graph_id);
  if (!executor.ok()) return executor.status().WithContext(fmt::format("loading graph {}", graph_id));
  FillSummary(compiled.graph, &entry->summary);
  std::atomic_store(&entry->executor, std::move(executor).value());
  return {};
}

Expected<std::string> Session::CompileGraphToModel(uint32_t graph_id, const ExportInfo& info) {
  GE_ASSIGN_OR_RETURN(auto entry, Find(graph_id));
  std::lock_guard<std::mutex> lock(entry->compile_mu);
  GE_CHECK(!std::atomic_load(&entry->executor), "graph {} is compiled already", graph_id);
  GE_ASSIGN_OR_RETURN(auto graph, CloneGraph(*entry->graph));  // the entry keeps its graph if this fails
  GE_ASSIGN_OR_RETURN(CompiledModel model, CompileToModel(std::move(graph), entry->options, info, graph_id));
  GE_ASSIGN_OR_RETURN(std::string bytes, EncodeModelFile(model.file));
  GE_ASSIGN_OR_RETURN(auto executor, MakeExecutor(model.compiled.model, model.device, model.options, graph_id));
  FillSummary(model.compiled, &entry->summary);
  entry->graph = model.runtime_graph;
  std::atomic_store(&entry->executor, std::move(executor));
  return bytes;
}

Status Session::LoadGraph(uint32_t graph_id, std::string_view model_file, const Options& options) {
  GE_CHECK(GEIsInitialized(), "GEInitialize has not been called");
  auto entry = NewEntry(options);
  GE_RETURN_IF_ERROR(ValidateOptions(entry->options).WithContext(fmt::format("LoadGraph({}) options", graph_id)));
  const WeightsOpener no_weights = [](const std::string& name) -> Expected<MappedBytes> {
    return InvalidArgument("a model file held in memory cannot refer to a weights file ('{}')", name);
  };
  auto context = [graph_id](const Status& st) { return st.WithContext(fmt::format("loading graph {}", graph_id)); };
  auto file = ParseModelFile(model_file, no_weights);
  if (!file.ok()) return context(file.status());
  auto model = CompileModelFile(std::move(file).value(), entry->options, graph_id);
  if (!model.ok()) return context(model.status());
  auto executor = MakeExecutor(model->compiled.model, model->device, model->options, graph_id);
  if (!executor.ok()) return context(executor.status());
  FillSummary(model->compiled, &entry->summary);
  entry->graph = model->runtime_graph;
  entry->executor = std::move(executor).value();
  return Insert(graph_id, std::move(entry));
}

Expected<std::shared_ptr<SinkExecutor>> Session::Executor(uint32_t graph_id) const {
  GE_ASSIGN_OR_RETURN(auto entry, Find(graph_id));
  auto executor = std::atomic_load(&entry->executor);
  GE_CHECK(executor != nullptr, "graph {} must be compiled (CompileGraph) first", graph_id);
  return executor;
}

Expected<std::string> Session::StreamMode(uint32_t graph_id) const {
  GE_ASSIGN_OR_RETURN(auto executor, Executor(graph_id));
  return executor->StreamMode();
}

Status Session::RunGraph(uint32_t graph_id, const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) {
  GE_ASSIGN_OR_RETURN(auto executor, Executor(graph_id));
  return executor->Run(inputs, outputs);
}

Expected<GraphProfile> Session::TakeProfile(uint32_t graph_id) {
  GE_ASSIGN_OR_RETURN(auto executor, Executor(graph_id));
  GraphProfile profile;
  const Model& m = executor->model();
  profile.graph_name = m.graph_name;
  for (const TaskDef& task : m.tasks) {
    profile.task_names.push_back(task.name);
    profile.task_types.push_back(task.type);
    profile.task_engines.push_back(task.engine);
    profile.task_streams.push_back(task.stream);
  }
  profile.runs = executor->TakeProfile(&profile.dropped_runs);
  return profile;
}

Status Session::RemoveGraph(uint32_t graph_id) {
  GE_RETURN_IF_ERROR(Find(graph_id).status());
  std::lock_guard<std::mutex> lock(mu_);
  graphs_.erase(graph_id);  // runs in flight keep their executor alive through shared_ptr
  return {};
}

Expected<CompiledGraphSummary> Session::GetCompiledGraphSummary(uint32_t graph_id) const {
  GE_ASSIGN_OR_RETURN(auto entry, Find(graph_id));
  std::lock_guard<std::mutex> lock(entry->compile_mu);
  GE_CHECK(entry->executor != nullptr, "graph {} has not been compiled", graph_id);
  return entry->summary;
}

Expected<const Graph*> Session::GetGraph(uint32_t graph_id) const {
  GE_ASSIGN_OR_RETURN(auto entry, Find(graph_id));
  return static_cast<const Graph*>(entry->graph.get());
}

}  // namespace ge
