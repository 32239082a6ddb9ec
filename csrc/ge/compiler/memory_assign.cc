#include "ge/compiler/memory_assign.h"

#include <algorithm>

#include "ge/compiler/memory_planner.h"
#include "ge/compiler/partition.h"
#include "ge/compiler/view_ops.h"
#include "ge/ops/rewrite_utils.h"
#include "ge/ops/op_registry.h"

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

Expected<MemoryLayout> AssignMemory(Graph& graph, const std::vector<Node*>& schedule, bool reuse,
                                    const KernelFactory* kernels, const FusedKernelDefs* fused) {
  auto definition_of = [fused](const Node* node) -> const FusedKernelDef* {
    if (fused == nullptr) return nullptr;
    auto it = fused->find(node);
    return it == fused->end() ? nullptr : it->second.get();
  };
  MemoryLayout layout;
  Node* net_output = graph.NetOutputNode();
  std::unordered_map<const Node*, int32_t> step_of;
  for (size_t s = 0; s < schedule.size(); ++s) step_of[schedule[s]] = static_cast<int32_t>(s);
  for (Node* node : schedule) {  // the memory stage may plan several orders: drop an earlier plan's marks
    node->mutable_attrs().erase(kAttrView);
    node->mutable_attrs().erase(kAttrInplaceInput);
    node->mutable_attrs().erase(kAttrWorkspaceOffsets);
    node->mutable_attrs().erase(kAttrWorkspaceSizes);
  }

  for (Node* node : schedule) {
    const OpProto* proto = OpRegistry::Global().Find(node->type());
    auto& ids = layout.value_ids[node];
    for (int o = 0; o < node->num_outputs(); ++o) {
      ids.push_back(static_cast<int32_t>(layout.values.size()));
      ValueInfo info;
      info.desc = node->output_desc(o);
      info.producer = node->name();
      const int inplace_input = proto ? proto->InplaceInputOf(o) : -1;
      if (inplace_input >= 0) {
        // The output is the updated input's memory; today only graph inputs are updated in place.
        const Value ref = node->input(proto->InputRange(inplace_input, node->num_inputs()).first);
        const ValueInfo& target = layout.values[static_cast<size_t>(layout.value_ids[ref.node][static_cast<size_t>(ref.index)])];
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
        layout.const_bytes += info.constant.nbytes();
      }
      layout.values.push_back(std::move(info));
    }
  }

  // Graph outputs, in NetOutput input order.
  layout.input_values.resize(graph.DataNodes().size());
  for (Node* data : graph.DataNodes())
    layout.input_values[static_cast<size_t>(data->GetAttrOr<int64_t>("index", 0))] = layout.value_ids[data][0];
  for (int k = 0; k < net_output->num_inputs(); ++k) {
    Value v = net_output->input(k);
    const int32_t id = layout.value_ids[v.node][static_cast<size_t>(v.index)];
    ValueInfo& info = layout.values[static_cast<size_t>(id)];
    if (info.placement == Placement::kInput) {
      layout.outputs.push_back({OutputSource::Kind::kInput, info.io_index});
    } else if (info.placement == Placement::kConstant) {
      layout.outputs.push_back({OutputSource::Kind::kConstant, id});
    } else if (info.placement == Placement::kOutput) {
      layout.outputs.push_back({OutputSource::Kind::kDuplicate, info.io_index});
    } else {
      info.placement = Placement::kOutput;
      info.io_index = k;
      layout.outputs.push_back({OutputSource::Kind::kComputed, id});
    }
  }

  // Values sharing bytes form groups named by their root (the first value): zero-copy views
  // read a contiguous block of their root's bytes (`delta` bytes in); an elementwise op may
  // write its output over an input that dies at that op. Views of arena values, inputs and
  // constants; a view that is a graph output keeps its own output memory (and its copy kernel).
  std::vector<int32_t> root_of(layout.values.size());
  std::vector<int64_t> delta(layout.values.size(), 0);  // byte offset of a value inside its root
  for (size_t id = 0; id < root_of.size(); ++id) root_of[id] = static_cast<int32_t>(id);
  std::vector<int32_t> last_use(layout.values.size(), 0);  // step of each value's last reader
  for (Node* node : schedule)
    for (int o = 0; o < node->num_outputs(); ++o) {
      int32_t last = step_of[node];
      for (const Use& use : node->users(o)) last = std::max(last, step_of[use.user]);
      last_use[static_cast<size_t>(layout.value_ids[node][static_cast<size_t>(o)])] = last;
    }
  std::unordered_map<int32_t, int32_t> group_last;  // root -> last use of any value of its group
  auto group_end = [&](int32_t root) {
    auto it = group_last.find(root);
    return it == group_last.end() ? last_use[static_cast<size_t>(root)] : it->second;
  };
  auto value_of = [&](Value v) { return layout.value_ids[v.node][static_cast<size_t>(v.index)]; };
  auto join = [&](int32_t value, int32_t source, int64_t offset_in_source) {
    const int32_t root = root_of[static_cast<size_t>(source)];
    root_of[static_cast<size_t>(value)] = root;
    delta[static_cast<size_t>(value)] = delta[static_cast<size_t>(source)] + offset_in_source;
    group_last[root] = std::max(group_end(root), last_use[static_cast<size_t>(value)]);
  };
  // A view reads its root's bytes; it needs no kernel at all.
  // Strided views (a column, a stepped slice) only where every reader's kernel takes strides.
  auto strided_readers_ok = [&](Node* node) {
    if (kernels == nullptr || node->users(0).empty()) return false;
    const int rank = static_cast<int>(node->output_desc(0).shape.size());
    for (const Use& use : node->users(0)) {
      if (use.user->type() == kOpNetOutput) return false;
      if (const FusedKernelDef* def = definition_of(use.user)) {
        // The generated code reads dense buffers; a producer reads its inputs as its kernel does.
        const auto producer = def->ProducerOfInput(use.input_index);
        if (!producer || !kernels->AcceptsStridedInput(producer->producer->type, producer->index, rank, producer->producer->attrs))
          return false;
        continue;
      }
      if (!kernels->AcceptsStridedInput(use.user->type(), use.input_index, rank, use.user->attrs())) return false;
    }
    return true;
  };
  auto try_view = [&](Node* node) {
    std::optional<int64_t> offset = ViewByteOffset(node);
    std::vector<int64_t> strides;
    if (!offset) {
      auto strided = StridedViewOf(node);
      if (!strided || !strided_readers_ok(node)) return false;
      offset = strided->byte_offset;
      strides = std::move(strided->strides);
    }
    const int32_t out = layout.value_ids[node][0];
    const int32_t source = value_of(node->input(0));
    const int32_t root = root_of[static_cast<size_t>(source)];
    ValueInfo& view = layout.values[static_cast<size_t>(out)];
    const ValueInfo& root_info = layout.values[static_cast<size_t>(root)];
    if (view.placement != Placement::kArena || root_info.placement == Placement::kOutput) return false;
    if (!layout.values[static_cast<size_t>(source)].strides.empty()) return false;  // views of dense values only
    view.strides = std::move(strides);
    join(out, source, *offset);
    view.placement = root_info.placement;
    view.io_index = root_info.io_index;
    if (root_info.placement == Placement::kInput) view.offset = delta[static_cast<size_t>(out)];
    if (root_info.placement == Placement::kConstant)
      view.constant = Tensor(view.desc, static_cast<uint8_t*>(root_info.constant.data()) + delta[static_cast<size_t>(out)],
                             root_info.constant.owner());
    node->SetAttr(kAttrView, true);
    ++layout.view_values;
    return true;
  };
  // An output written over an arena input of its dtype and shape whose group dies at this op.
  auto try_write_over_input = [&](Node* node) {
    if (kernels == nullptr || !kernels->WritesOverInput(node->type()) || node->num_outputs() != 1 ||
        HasControlEdges(node))
      return;
    const int32_t out = layout.value_ids[node][0];
    if (layout.values[static_cast<size_t>(out)].placement != Placement::kArena) return;
    for (int i = 0; i < node->num_inputs(); ++i) {
      const Value x = node->input(i);
      if (!x.valid() || !(x.node->output_desc(x.index) == node->output_desc(0))) continue;
      if (!layout.values[static_cast<size_t>(value_of(x))].strides.empty()) continue;  // not dense bytes
      const int32_t root = root_of[static_cast<size_t>(value_of(x))];
      if (layout.values[static_cast<size_t>(root)].placement != Placement::kArena) continue;
      if (group_end(root) != step_of[node]) continue;  // something reads it later
      join(out, value_of(x), 0);
      node->SetAttr(kAttrInplaceInput, int64_t{i});
      ++layout.inplace_values;
      return;
    }
  };
  if (reuse) {
    for (Node* node : schedule)
      if (!try_view(node)) try_write_over_input(node);
  }

  // One arena buffer per group root, live from the root's producer to its group's last use,
  // and one per kernel workspace, live only while its task runs.
  std::vector<BufferRequest> requests;
  std::vector<int32_t> request_value;
  for (Node* node : schedule) {
    for (int32_t id : layout.value_ids[node]) {
      if (layout.values[static_cast<size_t>(id)].placement != Placement::kArena || root_of[static_cast<size_t>(id)] != id)
        continue;
      requests.push_back({layout.values[static_cast<size_t>(id)].desc.ByteSize(), step_of[node], group_end(id)});
      request_value.push_back(id);
    }
    if (kernels == nullptr || IsLocalOp(node->type()) || node->GetAttrOr<bool>(kAttrView, false)) continue;
    std::vector<TensorDesc> inputs, outputs;
    for (Value v : node->inputs()) inputs.push_back(v.valid() ? v.node->output_desc(v.index) : TensorDesc());
    for (int o = 0; o < node->num_outputs(); ++o) outputs.push_back(node->output_desc(o));
    const FusedKernelDef* def = definition_of(node);
    for (TensorDesc& desc : def ? def->Workspaces() : kernels->Workspaces(node->type(), inputs, outputs, node->attrs())) {
      const auto id = static_cast<int32_t>(layout.values.size());
      ValueInfo info;
      info.desc = std::move(desc);
      info.producer = node->name() + " (workspace)";
      layout.workspace_bytes += info.desc.ByteSize();
      requests.push_back({info.desc.ByteSize(), step_of[node], step_of[node]});
      request_value.push_back(id);
      layout.values.push_back(std::move(info));
      layout.workspace_ids[node].push_back(id);
    }
  }
  const ArenaPlan plan = PlanArena(requests, reuse);
  for (size_t r = 0; r < requests.size(); ++r) layout.values[static_cast<size_t>(request_value[r])].offset = plan.offsets[r];
  for (size_t id = 0; id < root_of.size(); ++id)  // node outputs (workspaces come after them and are roots)
    if (root_of[id] != static_cast<int32_t>(id) && layout.values[id].placement == Placement::kArena)
      layout.values[id].offset = layout.values[static_cast<size_t>(root_of[id])].offset + delta[id];
  layout.arena_size = plan.arena_size;
  layout.arena_lower_bound = plan.lower_bound;
  layout.arena_no_reuse = plan.no_reuse_size;

  // Annotate nodes so that dumps and summaries show where every output lives.
  for (Node* node : schedule) {
    std::vector<int64_t> offsets, sizes;
    std::vector<std::string> placements;
    for (int32_t id : layout.value_ids[node]) {
      const ValueInfo& info = layout.values[static_cast<size_t>(id)];
      offsets.push_back(info.placement == Placement::kArena ? info.offset : -1);
      sizes.push_back(info.desc.ByteSize());
      placements.emplace_back(PlacementName(info.placement));
    }
    if (!offsets.empty()) {
      node->SetAttr(kAttrMemOffsets, offsets);
      node->SetAttr(kAttrMemSizes, sizes);
      node->SetAttr(kAttrPlacement, placements);
    }
    if (auto ws = layout.workspace_ids.find(node); ws != layout.workspace_ids.end()) {
      std::vector<int64_t> ws_offsets, ws_sizes;
      for (int32_t id : ws->second) {
        ws_offsets.push_back(layout.values[static_cast<size_t>(id)].offset);
        ws_sizes.push_back(layout.values[static_cast<size_t>(id)].desc.ByteSize());
      }
      node->SetAttr(kAttrWorkspaceOffsets, ws_offsets);
      node->SetAttr(kAttrWorkspaceSizes, ws_sizes);
    }
  }
  return layout;
}

}  // namespace ge
