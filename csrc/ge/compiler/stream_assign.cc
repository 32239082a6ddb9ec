#include "ge/compiler/stream_assign.h"

#include <algorithm>
#include <map>
#include <string>

#include "ge/compiler/partition.h"
#include "ge/ir/annotations.h"
#include "ge/ops/op_registry.h"

namespace ge {
namespace {

bool Communicates(const Node* node) { return IsCollective(node->type()); }

// A rough cost to balance branches between streams: elements written, times the reduction
// length for the ops that multiply matrices.
double EstimatedWork(const Node* node) {
  double elements = 0;
  for (int o = 0; o < node->num_outputs(); ++o)
    elements += static_cast<double>(std::max<int64_t>(node->output_desc(o).NumElements(), 1));
  const std::string& type = node->type();
  const bool products = type.find("MatMul") != std::string::npos || type.find("Conv") != std::string::npos;
  if (products && node->num_inputs() > 0 && node->input(0).valid()) {
    const Shape& x = node->input(0).node->output_desc(node->input(0).index).shape;
    if (!x.empty()) elements *= static_cast<double>(std::max<int64_t>(x.back(), 1));
  }
  return elements;
}

// The nodes `node` depends on that run on a stream (data and control producers).
std::vector<const Node*> StreamProducers(const Node* node) {
  std::vector<const Node*> out;
  for (Value v : node->inputs())
    if (v.valid() && !IsLocalOp(v.node->type())) out.push_back(v.node);
  for (const Node* c : node->control_inputs())
    if (!IsLocalOp(c->type())) out.push_back(c);
  return out;
}

}  // namespace

int32_t StreamAssignment::StreamOf(const Node* node) const {
  auto it = info_.find(node);
  return it == info_.end() ? -1 : it->second.stream;
}

const std::vector<const Node*>& StreamAssignment::WaitsOf(const Node* node) const { return InfoOf(node).waits; }

bool StreamAssignment::HappensBefore(const Node* a, const Node* b) const {
  if (a == b) return false;
  const Info& ia = InfoOf(a);
  return InfoOf(b).clock[static_cast<size_t>(ia.stream)] >= ia.position;
}

size_t StreamAssignment::FirstAfter(size_t stream, const Info& node) const {
  // Clocks grow along a stream, so the nodes after `node` are a suffix.
  const auto& nodes = streams_[stream];
  auto after = std::partition_point(nodes.begin(), nodes.end(), [&](const Node* q) {
    return InfoOf(q).clock[static_cast<size_t>(node.stream)] < node.position;
  });
  return static_cast<size_t>(after - nodes.begin());
}

int32_t StreamAssignment::LatestConcurrentStep(const Node* node) const {
  const Info& in = InfoOf(node);
  int32_t latest = in.step;
  for (size_t s = 0; s < streams_.size(); ++s) {
    if (static_cast<int32_t>(s) == in.stream) continue;
    const size_t after = FirstAfter(s, in);
    if (after > 0) latest = std::max(latest, InfoOf(streams_[s][after - 1]).step);
  }
  return latest;
}

StreamAssignment StreamAssignment::Assign(const Graph&, const std::vector<Node*>& schedule,
                                          const StreamOptions& options) {
  StreamAssignment a;
  const int compute = options.single_stream ? 1 : std::max(options.compute_streams, 1);
  std::vector<int32_t> compute_ids;  // stream ids of the compute streams, in first-use order
  std::vector<double> work;          // per stream
  int32_t comm = -1;
  auto new_stream = [&]() {
    a.streams_.emplace_back();
    work.push_back(0);
    return static_cast<int32_t>(a.streams_.size() - 1);
  };
  std::map<std::string, int32_t> user_streams;  // npu_stream_switch labels
  auto automatic = [&](int32_t s) { return std::find(compute_ids.begin(), compute_ids.end(), s) != compute_ids.end(); };
  auto pick = [&](const Node* node) -> int32_t {
    if (options.single_stream) return a.streams_.empty() ? new_stream() : 0;
    if (Communicates(node)) return comm >= 0 ? comm : (comm = new_stream());
    const std::string label = node->GetAttrOr<std::string>(kAttrUserStream, "");
    if (!label.empty()) {
      auto [it, added] = user_streams.emplace(label, 0);
      if (added) it->second = new_stream();
      return it->second;
    }
    for (const Node* p : StreamProducers(node)) {  // continue a chain: a producer that is its stream's tail
      const int32_t s = a.InfoOf(p).stream;
      if (automatic(s) && a.streams_[static_cast<size_t>(s)].back() == p) return s;
    }
    if (EstimatedWork(node) < options.min_branch_work) {  // not worth an event: stay with a producer
      for (const Node* p : StreamProducers(node))
        if (automatic(a.InfoOf(p).stream)) return a.InfoOf(p).stream;
      if (!compute_ids.empty()) return compute_ids.front();
    }
    if (static_cast<int>(compute_ids.size()) < compute) {
      compute_ids.push_back(new_stream());
      return compute_ids.back();
    }
    return *std::min_element(compute_ids.begin(), compute_ids.end(), [&](int32_t x, int32_t y) {
      return work[static_cast<size_t>(x)] < work[static_cast<size_t>(y)];
    });
  };
  for (size_t step = 0; step < schedule.size(); ++step) {
    const Node* node = schedule[step];
    if (IsLocalOp(node->type())) continue;
    const int32_t s = pick(node);
    Info info;
    info.stream = s;
    info.step = static_cast<int32_t>(step);
    info.position = static_cast<int32_t>(a.streams_[static_cast<size_t>(s)].size());
    a.streams_[static_cast<size_t>(s)].push_back(node);
    work[static_cast<size_t>(s)] += EstimatedWork(node);
    a.info_.emplace(node, std::move(info));
  }
  a.num_streams_ = static_cast<int32_t>(a.streams_.size());
  a.ComputeClocks(schedule);
  return a;
}

// Vector clocks in schedule order (a topological order, so producers come first): a node's
// clock merges the previous node of its stream and its producers; a producer on another stream
// whose position the clock does not reach yet is waited for.
void StreamAssignment::ComputeClocks(const std::vector<Node*>& schedule) {
  const size_t n = streams_.size();
  for (const Node* node : schedule) {
    auto it = info_.find(node);
    if (it == info_.end()) continue;
    Info& info = it->second;
    const auto& mine = streams_[static_cast<size_t>(info.stream)];
    info.clock =
        info.position > 0 ? InfoOf(mine[static_cast<size_t>(info.position - 1)]).clock : std::vector<int32_t>(n, -1);
    std::vector<const Node*> producers = StreamProducers(node);
    // Latest first, so that one wait covers the earlier nodes of the same stream.
    std::sort(producers.begin(), producers.end(),
              [&](const Node* x, const Node* y) { return InfoOf(x).position > InfoOf(y).position; });
    for (const Node* p : producers) {
      const Info& ip = InfoOf(p);
      if (ip.stream == info.stream || info.clock[static_cast<size_t>(ip.stream)] >= ip.position) continue;
      info.waits.push_back(p);
      for (size_t s = 0; s < n; ++s) info.clock[s] = std::max(info.clock[s], ip.clock[s]);
    }
    info.clock[static_cast<size_t>(info.stream)] = info.position;
  }
}

}  // namespace ge
