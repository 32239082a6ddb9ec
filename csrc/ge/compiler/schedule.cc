#include "ge/compiler/schedule.h"

#include <deque>
#include <unordered_map>
#include <unordered_set>

namespace ge {
namespace {

int Dependencies(const Node* n) {
  int deps = static_cast<int>(n->control_inputs().size());
  for (Value v : n->inputs()) deps += v.valid() ? 1 : 0;
  return deps;
}

// Kahn's algorithm; `depth_first` takes the most recently released node next.
std::vector<Node*> Kahn(const Graph& graph, bool depth_first) {
  std::unordered_map<const Node*, int> pending;
  std::deque<Node*> ready;
  for (Node* n : graph.nodes()) {  // creation order
    pending[n] = Dependencies(n);
    if (pending[n] == 0) ready.push_back(n);
  }
  std::vector<Node*> order;
  while (!ready.empty()) {
    Node* n;
    if (depth_first) {
      n = ready.back();
      ready.pop_back();
    } else {
      n = ready.front();
      ready.pop_front();
    }
    order.push_back(n);
    std::vector<Node*> released;
    for (int o = 0; o < n->num_outputs(); ++o)
      for (const Use& use : n->users(o))
        if (--pending[use.user] == 0) released.push_back(use.user);
    for (Node* c : n->control_outputs())
      if (--pending[c] == 0) released.push_back(c);
    // Depth first pops from the back: push in reverse so the first released runs first.
    if (depth_first)
      ready.insert(ready.end(), released.rbegin(), released.rend());
    else
      ready.insert(ready.end(), released.begin(), released.end());
  }
  return order;
}

// Post-order DFS over inputs from the sinks (NetOutput first, then other nodes nobody uses).
std::vector<Node*> ReverseDfs(const Graph& graph, bool stable) {
  std::vector<Node*> order;
  std::unordered_set<const Node*> done, on_path;
  struct Frame {
    Node* node;
    std::vector<Node*> deps;
    size_t next = 0;
  };
  auto visit = [&](Node* root) {
    if (done.count(root)) return;
    std::vector<Frame> stack;
    auto push = [&](Node* n) {
      Frame f{n, {}, 0};
      for (Value v : n->inputs())
        if (v.valid()) f.deps.push_back(v.node);
      for (Node* c : n->control_inputs()) f.deps.push_back(c);
      if (stable)
        std::sort(f.deps.begin(), f.deps.end(), [](const Node* a, const Node* b) { return a->id() < b->id(); });
      on_path.insert(n);
      stack.push_back(std::move(f));
    };
    push(root);
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next < top.deps.size()) {
        Node* dep = top.deps[top.next++];
        if (!done.count(dep) && !on_path.count(dep)) push(dep);
        continue;
      }
      done.insert(top.node);
      on_path.erase(top.node);
      order.push_back(top.node);
      stack.pop_back();
    }
  };
  if (Node* out = graph.NetOutputNode()) visit(out);
  for (Node* n : graph.nodes())
    if (!n->HasUsers()) visit(n);
  for (Node* n : graph.nodes()) visit(n);  // anything left (only possible with cycles)
  return order;
}

}  // namespace

Options OptionsForLaterInstance(const Options& options, TopoStrategy first_order) {
  Options out = options;
  auto named = out.find(option::kTopoSortingMode);
  const Expected<TopoStrategy> strategy = ParseTopoStrategy(named == out.end() ? "" : named->second);
  if (strategy.ok() && *strategy == TopoStrategy::kMemoryAware)
    out[option::kTopoSortingMode] = std::string(TopoStrategyName(first_order));
  return out;
}

Expected<TopoStrategy> ParseTopoStrategy(std::string_view text) {
  if (text.empty()) return kDefaultTopoStrategy;
  if (text == "BFS" || text == "0") return TopoStrategy::kBFS;
  if (text == "DFS" || text == "1") return TopoStrategy::kDFS;
  if (text == "RDFS" || text == "2") return TopoStrategy::kRDFS;
  if (text == "StableRDFS" || text == "3") return TopoStrategy::kStableRDFS;
  if (text == "MemoryAware") return TopoStrategy::kMemoryAware;
  return InvalidArgument("topology sorting strategy '{}' is not supported (BFS, DFS, RDFS, StableRDFS, MemoryAware)",
                         text);
}

std::string_view TopoStrategyName(TopoStrategy strategy) {
  switch (strategy) {
    case TopoStrategy::kBFS: return "BFS";
    case TopoStrategy::kDFS: return "DFS";
    case TopoStrategy::kRDFS: return "RDFS";
    case TopoStrategy::kStableRDFS: return "StableRDFS";
    case TopoStrategy::kMemoryAware: return "MemoryAware";
  }
  return "?";
}

Expected<std::vector<Node*>> ScheduleNodes(const Graph& graph, TopoStrategy strategy) {
  std::vector<Node*> order;
  switch (strategy) {
    case TopoStrategy::kBFS: order = Kahn(graph, false); break;
    case TopoStrategy::kDFS:
    case TopoStrategy::kMemoryAware: order = Kahn(graph, true); break;
    case TopoStrategy::kRDFS: order = ReverseDfs(graph, false); break;
    case TopoStrategy::kStableRDFS: order = ReverseDfs(graph, true); break;
  }
  if (order.size() != static_cast<size_t>(graph.num_nodes()))
    return InvalidArgument("graph '{}' has a cycle", graph.name());
  // A cycle would let RDFS emit a node before an input still on the DFS path: check the order.
  std::unordered_map<const Node*, size_t> position;
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  for (Node* n : order) {
    for (Value v : n->inputs())
      if (v.valid() && position[v.node] > position[n]) return InvalidArgument("graph '{}' has a cycle", graph.name());
    for (Node* c : n->control_inputs())
      if (position[c] > position[n]) return InvalidArgument("graph '{}' has a cycle", graph.name());
  }
  return order;
}

}  // namespace ge
