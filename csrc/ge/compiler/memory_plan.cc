#include "ge/compiler/memory_plan.h"

#include <algorithm>

#include "ge/compiler/arena_planner.h"
#include "ge/compiler/partition.h"
#include "ge/compiler/view_ops.h"
#include "ge/ops/op_names.h"
#include "ge/ops/op_registry.h"
#include "ge/ops/rewrite_utils.h"

namespace ge {
namespace {

const char* PlacementName(Placement p) {
  switch (p) {
    case Placement::kArena: return "arena";
    case Placement::kInput: return "input";
    case Placement::kOutput: return "output";
    case Placement::kConstant: return "constant";
  }
  return "?";
}

}  // namespace

MemoryPlanner::MemoryPlanner(const Graph& graph, const std::vector<Node*>& schedule, MemoryPlanOptions options)
    : graph_(graph), schedule_(schedule), options_(options) {
  for (size_t s = 0; s < schedule.size(); ++s) step_of_[schedule[s]] = static_cast<int32_t>(s);
}

Expected<MemoryPlan> MemoryPlanner::Plan() {
  GE_RETURN_IF_ERROR(NumberValues());
  PlaceGraphOutputs();
  if (options_.reuse) PlaceUpdatesInInputs();
  FindLastUses();
  if (options_.reuse) ShareBytes();
  PlaceArena();
  return std::move(plan_);
}

int32_t MemoryPlanner::ValueOf(Value v) const { return plan_.value_ids.at(v.node)[static_cast<size_t>(v.index)]; }

const FusedKernelDef* MemoryPlanner::DefinitionOf(const Node* node) const {
  if (options_.fused == nullptr) return nullptr;
  auto it = options_.fused->find(node);
  return it == options_.fused->end() ? nullptr : it->second.get();
}

Status MemoryPlanner::NumberValues() {
  for (const Node* node : schedule_) {
    const OpProto* proto = OpRegistry::Global().Find(node->type());
    auto& ids = plan_.value_ids[node];
    for (int o = 0; o < node->num_outputs(); ++o) {
      ids.push_back(static_cast<int32_t>(plan_.values.size()));
      ValueInfo info;
      info.desc = node->output_desc(o);
      info.producer = node->name();
      const int inplace_input = proto ? proto->InplaceInputOf(o) : -1;
      if (inplace_input >= 0) {
        // The output is the updated input's memory; today only graph inputs are updated in place.
        const Value ref = node->input(proto->InputRange(inplace_input, node->num_inputs()).first);
        const ValueInfo& target = plan_.values[static_cast<size_t>(ValueOf(ref))];
        GE_CHECK(target.placement == Placement::kInput,
                 "{} updates {} in place, but only graph inputs can be updated in place yet", node->ToString(),
                 ref.node->ToString());
        info.placement = Placement::kInput;
        info.io_index = target.io_index;
      } else if (node->type() == kOpData) {
        info.placement = Placement::kInput;
        info.io_index = static_cast<int32_t>(node->GetAttrOr<int64_t>("index", 0));
      } else if (node->type() == kOpConst) {
        info.placement = Placement::kConstant;
        info.constant = *node->GetAttr<Tensor>("value");
        plan_.const_bytes += info.constant.nbytes();
      }
      plan_.values.push_back(std::move(info));
    }
  }
  plan_.input_values.resize(graph_.DataNodes().size());
  for (Node* data : graph_.DataNodes())
    plan_.input_values[static_cast<size_t>(data->GetAttrOr<int64_t>("index", 0))] = plan_.value_ids.at(data)[0];
  return {};
}

// In NetOutput input order; an output that is already pinned is handed back from where it is.
void MemoryPlanner::PlaceGraphOutputs() {
  const Node* net_output = graph_.NetOutputNode();
  for (int k = 0; k < net_output->num_inputs(); ++k) {
    const int32_t id = ValueOf(net_output->input(k));
    ValueInfo& info = plan_.values[static_cast<size_t>(id)];
    if (info.placement == Placement::kInput) {
      plan_.outputs.push_back({OutputSource::Kind::kInput, info.io_index});
    } else if (info.placement == Placement::kConstant) {
      plan_.outputs.push_back({OutputSource::Kind::kConstant, id});
    } else if (info.placement == Placement::kOutput) {
      plan_.outputs.push_back({OutputSource::Kind::kDuplicate, info.io_index});
    } else {
      info.placement = Placement::kOutput;
      info.io_index = k;
      plan_.outputs.push_back({OutputSource::Kind::kComputed, id});
    }
  }
}

// Whether `producer`'s `output` may be written into the bytes of graph input `ref` at its step:
// either it does not read `ref`, or its kernel stores each element after its last read of it.
bool MemoryPlanner::MayStoreOver(const Node* producer, int output, Value ref) const {
  const FusedKernelDef* def = DefinitionOf(producer);
  for (int i = 0; i < producer->num_inputs(); ++i) {
    if (producer->input(i) != ref) continue;
    const bool elementwise = ElementwiseWritesOver(producer, ref);
    const bool fused = def != nullptr && static_cast<size_t>(output) < def->storable_over.size() &&
                       std::count(def->storable_over[static_cast<size_t>(output)].begin(),
                                  def->storable_over[static_cast<size_t>(output)].end(), i) != 0;
    if (!elementwise && !fused) return false;
  }
  return true;
}

// An optimizer step, a batch-norm statistic, a counter: Assign(input, f(input, ...)) would compute
// the new value in the arena and copy it over the input. Computing it in the input's bytes saves
// the copy -- when every other reader of the old value runs before the producer, the producer
// reads the input (if at all) only at the element it stores, and the value is not also a graph
// output. Views of an input updated in place are copies (view_ops.h), so the readers are direct.
void MemoryPlanner::PlaceUpdatesInInputs() {
  for (const Node* assign : schedule_) {
    if (assign->type() != kOpAssign) continue;
    const Value ref = assign->input(0), value = assign->input(1);
    ValueInfo& info = plan_.values[static_cast<size_t>(ValueOf(value))];
    const ValueInfo& target = plan_.values[static_cast<size_t>(ValueOf(ref))];
    if (target.placement != Placement::kInput || info.placement != Placement::kArena || !(info.desc == target.desc) ||
        IsLocalOp(value.node->type()) || !MayStoreOver(value.node, value.index, ref))
      continue;
    const auto& readers = ref.node->users(ref.index);
    if (std::any_of(readers.begin(), readers.end(), [&](const Use& use) {
          return use.user != assign && use.user != value.node && !RunsBefore(use.user, value.node);
        }))
      continue;  // the old value is read after the new one would overwrite it
    info.placement = Placement::kInput;
    info.io_index = target.io_index;
    plan_.updates_in_input.insert(assign);
  }
}

void MemoryPlanner::FindLastUses() {
  root_of_.resize(plan_.values.size());
  for (size_t id = 0; id < root_of_.size(); ++id) root_of_[id] = static_cast<int32_t>(id);
  delta_.assign(plan_.values.size(), 0);
  last_use_.assign(plan_.values.size(), 0);
  for (const Node* node : schedule_)
    for (int o = 0; o < node->num_outputs(); ++o) {
      int32_t last = EndStep(node);
      for (const Use& use : node->users(o)) last = std::max(last, EndStep(use.user));
      last_use_[static_cast<size_t>(plan_.value_ids.at(node)[static_cast<size_t>(o)])] = last;
    }
}

bool MemoryPlanner::MultiStream() const { return options_.streams != nullptr && !options_.streams->single(); }

// Where `reader` may still be reading: its own step, or with several streams the last step of
// any node that may start before it ends.
int32_t MemoryPlanner::EndStep(const Node* reader) const {
  if (!MultiStream() || IsLocalOp(reader->type())) return step_of_.at(reader);
  return options_.streams->LatestConcurrentStep(reader);
}

bool MemoryPlanner::RunsBefore(const Node* a, const Node* b) const {
  if (MultiStream() && !IsLocalOp(a->type()) && !IsLocalOp(b->type())) return options_.streams->HappensBefore(a, b);
  return step_of_.at(a) < step_of_.at(b);
}

// With several streams: whether every reader of the values in `root`'s group, but `writer`,
// and their producers finish before `writer` starts (so `writer` may overwrite the bytes).
bool MemoryPlanner::OtherReadersRunBefore(int32_t root, const Node* writer) const {
  if (!MultiStream()) return true;
  for (const Node* node : schedule_)
    for (int o = 0; o < node->num_outputs(); ++o) {
      const int32_t id = plan_.value_ids.at(node)[static_cast<size_t>(o)];
      if (root_of_[static_cast<size_t>(id)] != root) continue;
      if (node != writer && !IsLocalOp(node->type()) && !RunsBefore(node, writer)) return false;
      for (const Use& use : node->users(o))
        if (use.user != writer && !RunsBefore(use.user, writer)) return false;
    }
  return true;
}

int32_t MemoryPlanner::GroupEnd(int32_t root) const {
  auto it = group_last_.find(root);
  return it == group_last_.end() ? last_use_[static_cast<size_t>(root)] : it->second;
}

// `value` shares its bytes with `source`'s alias group, `offset_in_source` bytes into it.
void MemoryPlanner::Join(int32_t value, int32_t source, int64_t offset_in_source) {
  const int32_t root = root_of_[static_cast<size_t>(source)];
  root_of_[static_cast<size_t>(value)] = root;
  delta_[static_cast<size_t>(value)] = delta_[static_cast<size_t>(source)] + offset_in_source;
  group_last_[root] = std::max(GroupEnd(root), last_use_[static_cast<size_t>(value)]);
}

// Views of arena values, inputs, constants and outputs; a view that is a graph output is one
// only where its source moves into the output's memory (ComputeViewedOutputsInPlace), else it
// keeps its own output memory (and its copy kernel).
void MemoryPlanner::ShareBytes() {
  ComputeViewedOutputsInPlace();
  for (const Node* node : schedule_)
    if (!plan_.IsView(node) && !TryView(node)) TryWriteOverInput(node);
}

// A graph output that is all of another value's bytes under another shape (a training forward's
// saved activation `mm(x, w).view(b, s, h)`, a model's logits): the value is computed straight
// into the output's memory and the reshape is a view -- the output owns the bytes either way,
// so what was a copy kernel per run costs nothing. Only an arena value that nothing has placed
// yet (not itself an output, an input or a constant) moves; before any view joins its group.
void MemoryPlanner::ComputeViewedOutputsInPlace() {
  const Node* net_output = graph_.NetOutputNode();
  for (int k = 0; k < net_output->num_inputs(); ++k) {
    const Node* view = net_output->input(k).node;
    const int32_t out = ValueOf(net_output->input(k));
    const ValueInfo& out_info = plan_.values[static_cast<size_t>(out)];
    if (out_info.placement != Placement::kOutput || out_info.io_index != k) continue;  // not a duplicate
    const std::optional<int64_t> offset = ViewByteOffset(view);
    if (!offset || *offset != 0) continue;
    const int32_t source = ValueOf(view->input(0));
    ValueInfo& source_info = plan_.values[static_cast<size_t>(source)];
    if (source_info.placement != Placement::kArena || !source_info.strides.empty() ||
        source_info.desc.ByteSize() != out_info.desc.ByteSize() || root_of_[static_cast<size_t>(source)] != source)
      continue;
    source_info.placement = Placement::kOutput;
    source_info.io_index = k;
    Join(out, source, 0);
    plan_.views.insert(view);
  }
}

// A strided view (a column, a stepped slice) only where every reader's kernel takes strides. A
// FusedKernel's generated code reads dense buffers; its producers read their inputs as their
// own kernels do.
bool MemoryPlanner::StridedReadersAccept(const Node* node) const {
  const KernelFactory* kernels = options_.kernels;
  if (kernels == nullptr || node->users(0).empty()) return false;
  const int rank = static_cast<int>(node->output_desc(0).shape.size());
  for (const Use& use : node->users(0)) {
    if (use.user->type() == kOpNetOutput) return false;
    if (const FusedKernelDef* def = DefinitionOf(use.user)) {
      const auto producer = def->ProducerOfInput(use.input_index);
      if (!producer ||
          !kernels->AcceptsStridedInput(producer->producer->type, producer->index, rank, producer->producer->attrs))
        return false;
    } else if (!kernels->AcceptsStridedInput(use.user->type(), use.input_index, rank, use.user->attrs())) {
      return false;
    }
  }
  return true;
}

bool MemoryPlanner::TryView(const Node* node) {
  std::optional<int64_t> offset = ViewByteOffset(node);
  std::vector<int64_t> strides;
  if (!offset) {
    auto strided = StridedViewOf(node);
    if (!strided || !StridedReadersAccept(node)) return false;
    offset = strided->byte_offset;
    strides = std::move(strided->strides);
  }
  const int32_t out = plan_.value_ids.at(node)[0];
  const int32_t source = ValueOf(node->input(0));
  const int32_t root = root_of_[static_cast<size_t>(source)];
  ValueInfo& view = plan_.values[static_cast<size_t>(out)];
  const ValueInfo& root_info = plan_.values[static_cast<size_t>(root)];
  if (view.placement != Placement::kArena) return false;
  if (!plan_.values[static_cast<size_t>(source)].strides.empty()) return false;  // views of dense values only
  view.strides = std::move(strides);
  Join(out, source, *offset);
  view.placement = root_info.placement;
  view.io_index = root_info.io_index;
  if (root_info.placement == Placement::kInput || root_info.placement == Placement::kOutput)
    view.offset = delta_[static_cast<size_t>(out)];
  if (root_info.placement == Placement::kConstant)
    view.constant =
        Tensor(view.desc, static_cast<uint8_t*>(root_info.constant.data()) + delta_[static_cast<size_t>(out)],
               root_info.constant.owner());
  plan_.views.insert(node);
  return true;
}

// An output written over an arena input of its dtype and shape whose group dies at this op.
// An elementwise library kernel (the device's WritesOverInput) with one output shaped and typed
// like input `x`: it reads each element of x before writing the same element of its output.
bool MemoryPlanner::ElementwiseWritesOver(const Node* node, Value x) const {
  return options_.kernels != nullptr && options_.kernels->WritesOverInput(node->type()) && node->num_outputs() == 1 &&
         x.node->output_desc(x.index) == node->output_desc(0);
}

void MemoryPlanner::TryWriteOverInput(const Node* node) {
  const KernelFactory* kernels = options_.kernels;
  if (kernels == nullptr || !kernels->WritesOverInput(node->type()) || node->num_outputs() != 1) return;
  // A collective's control edges only keep the collectives in program order (OrderCollectives).
  if (HasControlEdges(node) && !IsCollective(node->type())) return;
  const int32_t out = plan_.value_ids.at(node)[0];
  if (plan_.values[static_cast<size_t>(out)].placement != Placement::kArena) return;
  for (int i = 0; i < node->num_inputs(); ++i) {
    const Value x = node->input(i);
    if (!x.valid() || !ElementwiseWritesOver(node, x)) continue;
    if (!plan_.values[static_cast<size_t>(ValueOf(x))].strides.empty()) continue;  // not dense bytes
    const int32_t root = root_of_[static_cast<size_t>(ValueOf(x))];
    if (plan_.values[static_cast<size_t>(root)].placement != Placement::kArena) continue;
    if (GroupEnd(root) != EndStep(node) || !OtherReadersRunBefore(root, node)) continue;  // read later
    Join(out, ValueOf(x), 0);
    plan_.written_over_input[node] = i;
    return;
  }
}

std::vector<TensorDesc> MemoryPlanner::WorkspacesOf(const Node* node) const {
  if (const FusedKernelDef* def = DefinitionOf(node)) return def->Workspaces();
  std::vector<TensorDesc> inputs, outputs;
  for (Value v : node->inputs()) inputs.push_back(v.valid() ? v.node->output_desc(v.index) : TensorDesc());
  for (int o = 0; o < node->num_outputs(); ++o) outputs.push_back(node->output_desc(o));
  return options_.kernels->Workspaces(node->type(), inputs, outputs, node->attrs());
}

// One arena buffer per alias group root, live from the root's producer to its group's last use,
// and one per kernel workspace, live only while its task runs.
void MemoryPlanner::PlaceArena() {
  std::vector<BufferRequest> requests;
  std::vector<int32_t> request_value;
  const size_t node_values = plan_.values.size();
  for (const Node* node : schedule_) {
    const int32_t step = step_of_.at(node);
    for (int32_t id : plan_.value_ids.at(node)) {
      if (plan_.values[static_cast<size_t>(id)].placement != Placement::kArena ||
          root_of_[static_cast<size_t>(id)] != id)
        continue;
      requests.push_back({plan_.values[static_cast<size_t>(id)].desc.ByteSize(), step, GroupEnd(id)});
      request_value.push_back(id);
    }
    if (options_.kernels == nullptr || IsLocalOp(node->type()) || plan_.IsView(node)) continue;
    for (TensorDesc& desc : WorkspacesOf(node)) {
      const auto id = static_cast<int32_t>(plan_.values.size());
      ValueInfo info;
      info.desc = std::move(desc);
      info.producer = node->name() + " (workspace)";
      plan_.workspace_bytes += info.desc.ByteSize();
      requests.push_back({info.desc.ByteSize(), step, EndStep(node)});
      request_value.push_back(id);
      plan_.values.push_back(std::move(info));
      plan_.workspace_ids[node].push_back(id);
    }
  }
  const ArenaPlan arena = PlanArena(requests, options_.reuse);
  for (size_t r = 0; r < requests.size(); ++r)
    plan_.values[static_cast<size_t>(request_value[r])].offset = arena.offsets[r];
  for (size_t id = 0; id < node_values; ++id)  // aliases sit at their root's offset plus their delta
    if (root_of_[id] != static_cast<int32_t>(id) && plan_.values[id].placement == Placement::kArena)
      plan_.values[id].offset = plan_.values[static_cast<size_t>(root_of_[id])].offset + delta_[id];
  plan_.arena_size = arena.arena_size;
  plan_.arena_lower_bound = arena.lower_bound;
  plan_.arena_no_reuse = arena.no_reuse_size;
}

Expected<MemoryPlan> PlanMemory(const Graph& graph, const std::vector<Node*>& schedule, MemoryPlanOptions options) {
  return MemoryPlanner(graph, schedule, options).Plan();
}

void AnnotateMemory(Graph& graph, const std::vector<Node*>& schedule, const MemoryPlan& plan) {
  for (Node* node : graph.nodes())
    for (const char* key : {kAttrView, kAttrInplaceInput, kAttrWorkspaceOffsets, kAttrWorkspaceSizes})
      node->mutable_attrs().erase(key);
  for (Node* node : schedule) {
    std::vector<int64_t> offsets, sizes;
    std::vector<std::string> placements;
    for (int32_t id : plan.value_ids.at(node)) {
      const ValueInfo& info = plan.values[static_cast<size_t>(id)];
      offsets.push_back(info.placement == Placement::kArena ? info.offset : -1);
      sizes.push_back(info.desc.ByteSize());
      placements.emplace_back(PlacementName(info.placement));
    }
    if (!offsets.empty()) {
      node->SetAttr(kAttrMemOffsets, offsets);
      node->SetAttr(kAttrMemSizes, sizes);
      node->SetAttr(kAttrPlacement, placements);
    }
    if (plan.IsView(node)) node->SetAttr(kAttrView, true);
    if (auto it = plan.written_over_input.find(node); it != plan.written_over_input.end())
      node->SetAttr(kAttrInplaceInput, int64_t{it->second});
    if (auto ws = plan.workspace_ids.find(node); ws != plan.workspace_ids.end()) {
      std::vector<int64_t> ws_offsets, ws_sizes;
      for (int32_t id : ws->second) {
        ws_offsets.push_back(plan.values[static_cast<size_t>(id)].offset);
        ws_sizes.push_back(plan.values[static_cast<size_t>(id)].desc.ByteSize());
      }
      node->SetAttr(kAttrWorkspaceOffsets, ws_offsets);
      node->SetAttr(kAttrWorkspaceSizes, ws_sizes);
    }
  }
}

}  // namespace ge
