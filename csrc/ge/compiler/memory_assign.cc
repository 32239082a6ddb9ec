#include "ge/compiler/memory_assign.h"

#include <algorithm>

#include "ge/compiler/memory_planner.h"
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

Expected<MemoryLayout> AssignMemory(Graph& graph, const std::vector<Node*>& schedule, bool reuse) {
  MemoryLayout layout;
  Node* net_output = graph.NetOutputNode();
  std::unordered_map<const Node*, int32_t> step_of;
  for (size_t s = 0; s < schedule.size(); ++s) step_of[schedule[s]] = static_cast<int32_t>(s);

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

  // Lifetimes of arena values over the schedule.
  std::vector<BufferRequest> requests;
  std::vector<int32_t> request_value;
  for (Node* node : schedule) {
    for (int o = 0; o < node->num_outputs(); ++o) {
      const int32_t id = layout.value_ids[node][static_cast<size_t>(o)];
      if (layout.values[static_cast<size_t>(id)].placement != Placement::kArena) continue;
      int32_t last = step_of[node];
      for (const Use& use : node->users(o))
        if (use.user != net_output) last = std::max(last, step_of[use.user]);
      requests.push_back({layout.values[static_cast<size_t>(id)].desc.ByteSize(), step_of[node], last});
      request_value.push_back(id);
    }
  }
  const ArenaPlan plan = PlanArena(requests, reuse);
  for (size_t r = 0; r < requests.size(); ++r) layout.values[static_cast<size_t>(request_value[r])].offset = plan.offsets[r];
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
  }
  return layout;
}

}  // namespace ge
