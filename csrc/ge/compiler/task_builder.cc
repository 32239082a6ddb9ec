#include "ge/compiler/task_builder.h"

#include "ge/compiler/partition.h"
#include "ge/ops/op_registry.h"

namespace ge {
namespace {

StreamProgram BuildStreamProgram(const StreamAssignment& streams,
                                 const std::unordered_map<const Node*, int32_t>& task_of) {
  StreamProgram program;
  std::unordered_map<const Node*, int32_t> event_of;  // nodes some other stream waits for
  for (const auto& nodes : streams.streams())
    for (const Node* node : nodes)
      for (const Node* p : streams.WaitsOf(node))
        if (!event_of.count(p)) event_of.emplace(p, static_cast<int32_t>(event_of.size()));
  program.num_events = static_cast<int32_t>(event_of.size());
  int compute = 0;
  for (const auto& nodes : streams.streams()) {
    std::vector<StreamStep>& steps = program.streams.emplace_back();
    for (const Node* node : nodes) {
      for (const Node* p : streams.WaitsOf(node)) steps.push_back({StreamStep::Kind::kWait, event_of.at(p)});
      if (auto t = task_of.find(node); t != task_of.end()) steps.push_back({StreamStep::Kind::kRun, t->second});
      if (auto e = event_of.find(node); e != event_of.end()) steps.push_back({StreamStep::Kind::kRecord, e->second});
    }
    const bool communication = !nodes.empty() && IsCollective(nodes[0]->type());
    const std::string label = nodes.empty() ? "" : nodes[0]->GetAttrOr<std::string>(kAttrUserStream, "");
    program.names.push_back(communication    ? std::string("communication")
                            : !label.empty() ? "user " + label
                                             : fmt::format("compute {}", compute++));
  }
  return program;
}

}  // namespace

Expected<std::shared_ptr<const Model>> BuildModel(const Graph& graph, const std::vector<Node*>& schedule,
                                                  MemoryPlan plan, const autofuse::AutofuseResult& fused,
                                                  const StreamAssignment* streams, bool sizes_vary) {
  auto model = std::make_shared<Model>();
  model->graph_name = graph.name();
  std::unordered_map<const Node*, int32_t> task_of;
  for (Node* node : schedule) {
    if (IsLocalOp(node->type()) || plan.RunsNoTask(node)) continue;  // views, updates already in place
    task_of.emplace(node, static_cast<int32_t>(model->tasks.size()));
    TaskDef task;
    task.name = node->name();
    task.type = node->type();
    task.engine = node->GetAttrOr<std::string>(kAttrEngine, "");
    task.stream = streams != nullptr ? streams->StreamOf(node) : 0;
    task.fx_node = node->GetAttrOr<std::string>(kAttrFxNode, "");
    for (const auto& [key, value] : node->attrs())
      if (key.rfind('_', 0) != 0) task.attrs.emplace(key, value);
    for (Value v : node->inputs())
      task.inputs.push_back(v.valid() ? plan.value_ids.at(v.node)[static_cast<size_t>(v.index)] : -1);
    task.outputs = plan.value_ids.at(node);
    for (int o = 0; o < node->num_outputs(); ++o) task.output_used.push_back(!node->users(o).empty());
    if (auto ws = plan.workspace_ids.find(node); ws != plan.workspace_ids.end()) task.workspaces = ws->second;
    if (auto def = fused.kernels.find(node); def != fused.kernels.end()) task.fused_kernel = def->second;
    if (task.type == kOpFusedKernel && task.fused_kernel == nullptr)
      return FailedPrecondition("{}: a FusedKernel node without its definition (made outside auto-fusion?)",
                                node->ToString());
    model->tasks.push_back(std::move(task));
  }
  for (int32_t id : plan.input_values) model->input_descs.push_back(plan.values[static_cast<size_t>(id)].desc);
  Node* net_output = graph.NetOutputNode();
  for (Value v : net_output->inputs()) model->output_descs.push_back(v.node->output_desc(v.index));
  model->values = std::move(plan.values);
  model->input_values = std::move(plan.input_values);
  model->outputs = std::move(plan.outputs);
  model->arena_size = plan.arena_size;
  model->arena_lower_bound = plan.arena_lower_bound;
  model->arena_no_reuse = plan.arena_no_reuse;
  model->view_values = static_cast<int64_t>(plan.views.size());
  model->inplace_values = static_cast<int64_t>(plan.written_over_input.size());
  model->updates_in_input = static_cast<int64_t>(plan.updates_in_input.size());
  model->workspace_bytes = plan.workspace_bytes;
  model->const_bytes = plan.const_bytes;
  model->kernel_library = fused.library;
  model->sizes_vary = sizes_vary;
  if (streams != nullptr && !streams->single()) model->stream_program = BuildStreamProgram(*streams, task_of);
  return std::shared_ptr<const Model>(std::move(model));
}

}  // namespace ge
