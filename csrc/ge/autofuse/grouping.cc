#include "ge/autofuse/grouping.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "ge/autofuse/fusible_ops.h"
#include "ge/ir/annotations.h"
#include "ge/ops/infer_util.h"

namespace ge::autofuse {

Shape RowShape(const Shape& shape, int row_axis) {
  Shape row = shape;
  for (size_t d = static_cast<size_t>(row_axis); d < row.size(); ++d) row[d] = 1;
  return row;
}

namespace {

struct Member {
  int group = -1;
  std::vector<bool> row_outputs;    // per output: one value per row
  bool loads_from_outside = false;  // FusibleInfo::loads_from_outside
};

class Grouper {
 public:
  Grouper(const Graph& graph, const GroupingOptions& options) : options_(options) {
    auto order = graph.TopologicalOrder();
    if (order.ok()) order_ = std::move(order).value();
    for (size_t i = 0; i < order_.size(); ++i) position_[order_[i]] = static_cast<int>(i);
  }

  std::vector<FusionGroup> Run() {
    for (Node* node : order_) Visit(node);
    for (size_t gi = 0; gi < groups_.size(); ++gi)
      if (groups_[gi].group.nodes.size() >= 2)
        while (static_cast<int>(groups_[gi].group.nodes.size()) < options_.max_nodes &&
               TryAbsorb(static_cast<int>(gi))) {
        }
    std::vector<FusionGroup> out;
    for (auto& g : groups_)
      if (!g.group.nodes.empty()) out.push_back(std::move(g.group));
    return out;
  }

 private:
  struct Group {
    FusionGroup group;
    std::set<const Node*> members;
    std::set<std::pair<const Node*, int>> inputs;  // distinct external values read
    int first_position = 0;
  };

  // Whether value `v` is a row-level value of group `g` (or an element-level one).
  bool IsRowValue(Value v) const {
    auto it = members_.find(v.node);
    return it != members_.end() && it->second.row_outputs[static_cast<size_t>(v.index)];
  }

  // Can `node` (fusible as `info`) join group `gi`? Sets *row_outputs to the levels its outputs get there.
  bool Compatible(int gi, const Node* node, const FusibleInfo& info, std::vector<bool>* row_outputs) const {
    const FusionGroup& g = groups_[static_cast<size_t>(gi)].group;
    if (node->GetAttrOr<std::string>(kAttrUserStream, "") != g.user_stream) return false;
    const int data = info.DataInputs(node);
    auto in_group = [&](Value v) {
      auto it = members_.find(v.node);
      return it != members_.end() && it->second.group == gi;
    };
    if (info.row_axis) {  // a reducing op: reads an element-level value of the group's space
      const Value x = node->input(0);
      if (x.node->output_desc(x.index).shape != g.shape || (g.row_axis && *g.row_axis != *info.row_axis)) return false;
      for (int i = 0; i < data; ++i)
        if (node->input(i).valid() && in_group(node->input(i)) && IsRowValue(node->input(i))) return false;
      *row_outputs = info.row_outputs;
      return true;
    }
    const Shape& out = node->output_desc(0).shape;
    if (info.loads_from_outside)  // a transpose or concat reads its inputs from outside the group
      for (int i = 0; i < data; ++i)
        if (in_group(node->input(i))) return false;
    if (out == g.shape) {  // element-level; row-level operands must broadcast as a row does
      for (int i = 0; i < data; ++i) {
        const Value v = node->input(i);
        if (v.valid() && in_group(v) && IsRowValue(v) &&
            (!g.row_axis || v.node->output_desc(v.index).shape != RowShape(g.shape, *g.row_axis)))
          return false;
      }
      *row_outputs = {false};
      return true;
    }
    if (g.row_axis && out == RowShape(g.shape, *g.row_axis)) {  // row-level: only on row-level group values
      for (int i = 0; i < data; ++i) {
        const Value v = node->input(i);
        if (v.valid() && in_group(v) && !IsRowValue(v)) return false;
      }
      *row_outputs = {true};
      return true;
    }
    return false;
  }

  // Producers read by `nodes` from outside group `gi` (data and control inputs).
  std::vector<const Node*> OutsideInputs(int gi, const std::vector<Node*>& nodes) const {
    const Group& g = groups_[static_cast<size_t>(gi)];
    std::vector<const Node*> out;
    for (const Node* n : nodes) {
      for (const Value& v : n->inputs())
        if (v.valid() && !g.members.count(v.node)) out.push_back(v.node);
      for (const Node* c : n->control_inputs()) out.push_back(c);
    }
    return out;
  }

  // True when something in `starts` depends on a member of group `gi` once every group is one
  // node: then adding `starts`' readers to the group would make it wait for itself. Reaching
  // any member of another group H means depending on all of H's inputs (H runs as one kernel).
  // Groups in `also` are treated as part of `gi`'s new member set (not expanded).
  bool ReachesGroup(int gi, std::vector<const Node*> stack, std::set<int> also = {}) const {
    const Group& g = groups_[static_cast<size_t>(gi)];
    int earliest = g.first_position;
    for (int h : also) earliest = std::min(earliest, groups_[static_cast<size_t>(h)].first_position);
    std::set<const Node*> seen;
    std::set<int> expanded = also;
    expanded.insert(gi);
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      if (!seen.insert(n).second) continue;
      if (g.members.count(n)) return true;
      if (auto m = members_.find(n); m != members_.end() && expanded.insert(m->second.group).second)
        for (const Node* peer : groups_[static_cast<size_t>(m->second.group)].group.nodes) stack.push_back(peer);
      if (position_.at(n) < earliest) continue;  // made before either group started
      for (const Value& v : n->inputs())
        if (v.valid()) stack.push_back(v.node);
      for (const Node* c : n->control_inputs()) stack.push_back(c);
    }
    return false;
  }

  bool CreatesCycle(int gi, Node* node) const { return ReachesGroup(gi, OutsideInputs(gi, {node})); }

  // Ops that load from outside (transposes, concats) must keep their inputs outside their group.
  bool LoadReadsFrom(const Group& reader, const std::set<const Node*>& producers) const {
    for (const Node* n : reader.group.nodes)
      if (members_.at(n).loads_from_outside)
        for (const Value& v : n->inputs())
          if (v.valid() && producers.count(v.node)) return true;
    return false;
  }

  // Merges group `hi` into `gi` (a node just joined `gi` reads `hi`) when both iterate the same
  // space with compatible rows and no path leaves `hi` and reaches `gi` outside them.
  void TryMerge(int gi, int hi) {
    Group& g = groups_[static_cast<size_t>(gi)];
    Group& h = groups_[static_cast<size_t>(hi)];
    if (h.group.nodes.empty() || g.group.shape != h.group.shape || g.group.user_stream != h.group.user_stream) return;
    if (g.group.row_axis && h.group.row_axis && *g.group.row_axis != *h.group.row_axis) return;
    if (static_cast<int>(g.group.nodes.size() + h.group.nodes.size()) > options_.max_nodes) return;
    std::set<std::pair<const Node*, int>> inputs;
    for (const auto& in : g.inputs)
      if (!h.members.count(in.first)) inputs.insert(in);
    for (const auto& in : h.inputs)
      if (!g.members.count(in.first)) inputs.insert(in);
    if (static_cast<int>(inputs.size()) > options_.max_inputs) return;
    if (LoadReadsFrom(g, h.members) || LoadReadsFrom(h, g.members)) return;
    // Merged, the two run as one kernel: no input of either may depend on the other through
    // nodes outside both.
    auto outside_both = [&](const Group& x) {
      std::vector<const Node*> starts;
      for (const Node* n : x.group.nodes) {
        for (const Value& v : n->inputs())
          if (v.valid() && !h.members.count(v.node) && !g.members.count(v.node)) starts.push_back(v.node);
        for (const Node* c : n->control_inputs()) starts.push_back(c);
      }
      return starts;
    };
    if (ReachesGroup(gi, outside_both(h), {hi}) || ReachesGroup(hi, outside_both(g), {gi})) return;
    for (Node* n : h.group.nodes) {
      g.members.insert(n);
      members_[n].group = gi;
    }
    g.group.nodes.insert(g.group.nodes.end(), h.group.nodes.begin(), h.group.nodes.end());
    SortByPosition(g.group.nodes);
    g.inputs = std::move(inputs);
    g.first_position = std::min(g.first_position, h.first_position);
    if (!g.group.row_axis) g.group.row_axis = h.group.row_axis;
    h.group.nodes.clear();
    h.members.clear();
    h.inputs.clear();
  }

  // A small elementwise producer (its output broadcasts to the group's space, e.g. cos/sin of
  // rotary positions) read only by the group is recomputed inside it instead of running as a
  // kernel of its own.
  bool TryAbsorb(int gi) {
    Group& g = groups_[static_cast<size_t>(gi)];
    for (Node* member : g.group.nodes) {
      for (const Value& v : member->inputs()) {
        if (!v.valid() || g.members.count(v.node)) continue;
        Node* p = v.node;
        auto m = members_.find(p);
        if (m == members_.end() || groups_[static_cast<size_t>(m->second.group)].group.nodes.size() != 1 ||
            groups_[static_cast<size_t>(m->second.group)].group.user_stream != g.group.user_stream)
          continue;
        auto info = Fusible(p);
        if (!info || info->row_axis || p->num_outputs() != 1 || p->output_desc(0).shape == g.group.shape) continue;
        const auto joint = BroadcastShapes(p->output_desc(0).shape, g.group.shape);
        if (!joint.ok() || *joint != g.group.shape) continue;
        bool only_group = true;
        for (const Use& use : p->users(0)) only_group = only_group && g.members.count(use.user);
        if (!only_group || ReachesGroup(gi, OutsideInputs(gi, {p})) || LoadReadsFrom(g, {p})) continue;
        const int old = m->second.group;
        groups_[static_cast<size_t>(old)].group.nodes.clear();
        groups_[static_cast<size_t>(old)].members.clear();
        g.members.insert(p);
        m->second.group = gi;
        g.group.nodes.push_back(p);
        SortByPosition(g.group.nodes);
        g.first_position = std::min(g.first_position, position_.at(p));
        return true;  // the member list changed: start over
      }
    }
    return false;
  }

  void Visit(Node* node) {
    auto info = Fusible(node);
    if (!info) return;
    const int data = info->DataInputs(node);
    std::vector<int> tried;
    for (int i = 0; i < data; ++i) {
      const Value v = node->input(i);
      if (!v.valid()) continue;
      auto it = members_.find(v.node);
      if (it == members_.end() || std::count(tried.begin(), tried.end(), it->second.group)) continue;
      const int gi = it->second.group;
      tried.push_back(gi);
      std::vector<bool> rows;
      if (!Compatible(gi, node, *info, &rows) || CreatesCycle(gi, node)) continue;
      Group& g = groups_[static_cast<size_t>(gi)];
      auto inputs = g.inputs;
      for (int k = 0; k < data; ++k) {
        const Value x = node->input(k);
        if (x.valid() && !g.members.count(x.node)) inputs.insert({x.node, x.index});
      }
      if (static_cast<int>(g.group.nodes.size()) >= options_.max_nodes ||
          static_cast<int>(inputs.size()) > options_.max_inputs)
        continue;
      g.inputs = std::move(inputs);
      if (info->row_axis) g.group.row_axis = info->row_axis;
      Join(gi, node, std::move(rows), info->loads_from_outside);
      for (int k = 0; k < data; ++k) {  // the node may tie sibling groups together
        const Value x = node->input(k);
        if (!x.valid()) continue;
        auto other = members_.find(x.node);
        if (other != members_.end() && other->second.group != gi) TryMerge(gi, other->second.group);
      }
      return;
    }
    // A new group seeded by this node.
    Group g;
    if (info->row_axis) {
      const Value x = node->input(0);
      g.group.shape = x.node->output_desc(x.index).shape;
      g.group.row_axis = info->row_axis;
    } else {
      g.group.shape = node->output_desc(0).shape;
    }
    g.group.user_stream = node->GetAttrOr<std::string>(kAttrUserStream, "");
    g.first_position = position_.at(node);
    for (int k = 0; k < data; ++k)
      if (node->input(k).valid()) g.inputs.insert({node->input(k).node, node->input(k).index});
    groups_.push_back(std::move(g));
    Join(static_cast<int>(groups_.size()) - 1, node, info->row_axis ? info->row_outputs : std::vector<bool>{false},
         info->loads_from_outside);
  }

  void Join(int gi, Node* node, std::vector<bool> row_outputs, bool loads_from_outside) {
    Group& g = groups_[static_cast<size_t>(gi)];
    g.group.nodes.push_back(node);
    g.members.insert(node);
    members_[node] = {gi, std::move(row_outputs), loads_from_outside};
  }

  void SortByPosition(std::vector<Node*>& nodes) const {
    std::sort(nodes.begin(), nodes.end(),
              [&](const Node* a, const Node* b) { return position_.at(a) < position_.at(b); });
  }

  const GroupingOptions& options_;
  std::vector<Node*> order_;
  std::unordered_map<const Node*, int> position_;
  std::vector<Group> groups_;
  std::unordered_map<const Node*, Member> members_;
};

}  // namespace

std::vector<FusionGroup> FindFusionGroups(const Graph& graph, const GroupingOptions& options) {
  return Grouper(graph, options).Run();
}

}  // namespace ge::autofuse
