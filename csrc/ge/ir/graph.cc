#include "ge/ir/graph.h"

#include <algorithm>
#include <queue>

namespace ge {

bool Node::HasUsers() const {
  for (const auto& out : outputs_)
    if (!out.users.empty()) return true;
  return !control_outputs_.empty();
}

std::string Node::ToString() const { return fmt::format("{} '{}'", type_, name_); }

Node* Graph::AddNode(const std::string& type, const std::string& name, const std::vector<Value>& inputs,
                     int num_outputs) {
  std::string unique = name.empty() ? type : name;
  if (by_name_.count(unique)) {
    for (int k = 1;; ++k) {
      std::string candidate = fmt::format("{}_{}", unique, k);
      if (!by_name_.count(candidate)) {
        unique = std::move(candidate);
        break;
      }
    }
  }
  nodes_.push_back(std::unique_ptr<Node>(new Node(this, next_id_++, type, unique, num_outputs)));
  Node* node = nodes_.back().get();
  by_name_[unique] = node;
  for (Value v : inputs) AppendInput(node, v);
  return node;
}

void Graph::AddUse(Value v, Use use) {
  if (v.valid()) v.node->outputs_.at(static_cast<size_t>(v.index)).users.push_back(use);
}

void Graph::RemoveUse(Value v, Use use) {
  if (!v.valid()) return;
  auto& users = v.node->outputs_.at(static_cast<size_t>(v.index)).users;
  users.erase(std::find(users.begin(), users.end(), use));
}

void Graph::AppendInput(Node* node, Value value) {
  node->inputs_.push_back(value);
  AddUse(value, Use{node, node->num_inputs() - 1});
}

void Graph::SetInput(Node* node, int index, Value value) {
  RemoveUse(node->inputs_.at(static_cast<size_t>(index)), Use{node, index});
  node->inputs_[static_cast<size_t>(index)] = value;
  AddUse(value, Use{node, index});
}

void Graph::ReplaceAllUsesWith(Value from, Value to) {
  std::vector<Use> users = from.node->users(from.index);  // copy: SetInput edits the list
  for (const Use& use : users) SetInput(use.user, use.input_index, to);
}

void Graph::AddControlEdge(Node* src, Node* dst) {
  if (std::find(src->control_outputs_.begin(), src->control_outputs_.end(), dst) != src->control_outputs_.end()) return;
  src->control_outputs_.push_back(dst);
  dst->control_inputs_.push_back(src);
}

void Graph::MoveControlOutputs(Node* from, Node* to) {
  for (Node* dst : std::vector<Node*>(from->control_outputs_)) {
    auto& ins = dst->control_inputs_;
    ins.erase(std::remove(ins.begin(), ins.end(), from), ins.end());
    AddControlEdge(to, dst);
  }
  from->control_outputs_.clear();
}

Status Graph::RemoveNode(Node* node) {
  GE_CHECK(!node->HasUsers(), "cannot remove {}: it still has users", node->ToString());
  for (int i = 0; i < node->num_inputs(); ++i) RemoveUse(node->inputs_[static_cast<size_t>(i)], Use{node, i});
  for (Node* src : node->control_inputs_) {
    auto& outs = src->control_outputs_;
    outs.erase(std::remove(outs.begin(), outs.end(), node), outs.end());
  }
  for (Node* dst : node->control_outputs_) {  // the ordering it carried goes with it
    auto& ins = dst->control_inputs_;
    ins.erase(std::remove(ins.begin(), ins.end(), node), ins.end());
  }
  by_name_.erase(node->name());
  nodes_.erase(std::find_if(nodes_.begin(), nodes_.end(), [&](const auto& p) { return p.get() == node; }));
  return {};
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(nodes_.size());
  for (const auto& n : nodes_) out.push_back(n.get());
  return out;
}

Node* Graph::FindNode(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<Node*> Graph::DataNodes() const {
  std::vector<Node*> data;
  for (const auto& n : nodes_)
    if (n->type() == kOpData) data.push_back(n.get());
  std::stable_sort(data.begin(), data.end(), [](Node* a, Node* b) {
    return a->GetAttrOr<int64_t>("index", 0) < b->GetAttrOr<int64_t>("index", 0);
  });
  return data;
}

Node* Graph::NetOutputNode() const {
  for (const auto& n : nodes_)
    if (n->type() == kOpNetOutput) return n.get();
  return nullptr;
}

Expected<std::vector<Node*>> Graph::TopologicalOrder() const {
  // Inputs not yet ordered, per node id (ids are dense enough: one per node ever created here).
  std::vector<int> pending(static_cast<size_t>(next_id_), 0);
  auto by_id = [](const Node* a, const Node* b) { return a->id() > b->id(); };
  std::priority_queue<Node*, std::vector<Node*>, decltype(by_id)> ready(by_id);
  for (const auto& n : nodes_) {
    int deps = static_cast<int>(n->control_inputs_.size());
    for (Value v : n->inputs_) deps += v.valid() ? 1 : 0;
    pending[static_cast<size_t>(n->id())] = deps;
    if (deps == 0) ready.push(n.get());
  }
  std::vector<Node*> order;
  order.reserve(nodes_.size());
  auto release = [&](Node* n) {
    if (--pending[static_cast<size_t>(n->id())] == 0) ready.push(n);
  };
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    order.push_back(n);
    for (const auto& out : n->outputs_)
      for (const Use& use : out.users) release(use.user);
    for (Node* c : n->control_outputs_) release(c);
  }
  if (order.size() != nodes_.size()) return InvalidArgument("graph '{}' has a cycle", name_);
  return order;
}

Status Graph::Verify() const {
  Node* net_output = nullptr;
  std::vector<int64_t> data_indices;
  for (const auto& n : nodes_) {
    for (int i = 0; i < n->num_inputs(); ++i) {
      Value v = n->inputs_[static_cast<size_t>(i)];
      if (!v.valid()) continue;
      GE_CHECK(v.node->graph_ == this, "{} input {} comes from another graph", n->ToString(), i);
      GE_CHECK(v.index >= 0 && v.index < v.node->num_outputs(), "{} input {} reads output {} of {}, which has {}",
               n->ToString(), i, v.index, v.node->ToString(), v.node->num_outputs());
      const auto& users = v.node->users(v.index);
      GE_CHECK(std::find(users.begin(), users.end(), Use{n.get(), i}) != users.end(),
               "{} input {} is missing from the user list of {}", n->ToString(), i, v.node->ToString());
    }
    for (int o = 0; o < n->num_outputs(); ++o)
      for (const Use& use : n->users(o))
        GE_CHECK((use.user->input(use.input_index) == Value{n.get(), o}), "stale user entry on {} output {}",
                 n->ToString(), o);
    if (n->type() == kOpNetOutput) {
      GE_CHECK(net_output == nullptr, "graph '{}' has more than one NetOutput", name_);
      net_output = n.get();
    }
    if (n->type() == kOpData) data_indices.push_back(n->GetAttrOr<int64_t>("index", -1));
  }
  GE_CHECK(net_output != nullptr, "graph '{}' has no NetOutput node", name_);
  std::sort(data_indices.begin(), data_indices.end());
  for (size_t i = 0; i < data_indices.size(); ++i)
    GE_CHECK(data_indices[i] == static_cast<int64_t>(i), "graph '{}': Data indices must be 0..{}, found {}", name_,
             data_indices.size() - 1, data_indices[i]);
  auto order = TopologicalOrder();
  return order.status();
}

Expected<std::unique_ptr<Graph>> CloneGraph(const Graph& graph, const std::string& name) {
  GE_ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
  auto copy = std::make_unique<Graph>(name.empty() ? graph.name() : name);
  std::unordered_map<const Node*, Node*> copied;
  for (const Node* node : order) {
    std::vector<Value> inputs;
    for (const Value& v : node->inputs()) inputs.push_back(v.valid() ? Value{copied.at(v.node), v.index} : Value{});
    Node* c = copy->AddNode(node->type(), node->name(), inputs, node->num_outputs());
    for (int o = 0; o < node->num_outputs(); ++o) c->output_desc(o) = node->output_desc(o);
    c->mutable_attrs() = node->attrs();
    for (const Node* control : node->control_inputs()) copy->AddControlEdge(copied.at(control), c);
    copied[node] = c;
  }
  return copy;
}

}  // namespace ge
