// Stage "streams" (run with the memory stage, per candidate schedule): which stream every
// node runs on, and the happens-before order that streams and their events give.
//
// Independent branches go to separate compute streams, so they can run at the same time;
// collectives go to a communication stream of their own, so compute overlaps communication
// and a consumer waits for the collective only when it needs the result. A node continues the
// stream of a producer it depends on when that producer is the stream's last node (a chain
// stays on one stream, no event); a node that continues no stream and has enough estimated work
// to pay for a hand-off between threads starts on a free stream, or on the compute stream with
// the least estimated work so far; a smaller one joins the stream of one of its producers. A node that depends on a
// node of another stream waits for that node's event (unless the stream already waited for it or for something after
// it).
//
// Nodes the user put on a stream (torchair_ge.scope.npu_stream_switch: attr _user_stream_label)
// run on one stream per label; the automatic rules never put other nodes there.
//
// Nodes that run no task (views) keep their place in their stream: their waits and records
// are steps of that stream, so the order at run time is exactly the order planned here.
#pragma once

#include <unordered_map>
#include <vector>

#include "ge/ir/graph.h"

namespace ge {

struct StreamOptions {
  bool single_stream = false;  // ge.enableSingleStream: every node on stream 0
  int compute_streams = 2;     // at most this many streams for compute
  // A node that continues no chain opens a branch on a stream of its own only with at least this
  // much estimated work (multiply-adds or elements): below it, the hand-off between threads
  // (microseconds) costs more than running the node after the others. ge.exec.streamMinBranchWork.
  double min_branch_work = double{1 << 18};
};

class StreamAssignment {
 public:
  int32_t num_streams() const { return num_streams_; }
  bool single() const { return num_streams_ <= 1; }
  // Stream of a node that may run a task (not Data/Const/NetOutput); -1 for the others.
  int32_t StreamOf(const Node* node) const;
  // The nodes of each stream, in schedule order.
  const std::vector<std::vector<const Node*>>& streams() const { return streams_; }
  // The producers `node` waits for before it runs (on other streams; already minimal).
  const std::vector<const Node*>& WaitsOf(const Node* node) const;
  // Whether `a` has finished whenever `b` starts, in every run (stream order plus events).
  bool HappensBefore(const Node* a, const Node* b) const;
  // For the memory planner: the latest schedule step of a node that may start before `node`
  // has finished (`node`'s own step with one stream). Bytes `node` reads may go to a value whose
  // producer comes later than this step: that producer then always starts after `node` ends.
  int32_t LatestConcurrentStep(const Node* node) const;

  static StreamAssignment Assign(const Graph& graph, const std::vector<Node*>& schedule, const StreamOptions& options);

 private:
  struct Info {
    int32_t stream = -1;
    int32_t position = 0;        // index in its stream
    int32_t step = 0;            // index in the schedule
    std::vector<int32_t> clock;  // per stream: the last position that happens before or is this node
    std::vector<const Node*> waits;
  };
  const Info& InfoOf(const Node* node) const { return info_.at(node); }
  // The first position on `stream` whose node waited (directly or not) for `node`.
  size_t FirstAfter(size_t stream, const Info& node) const;
  void ComputeClocks(const std::vector<Node*>& schedule);

  int32_t num_streams_ = 1;
  std::vector<std::vector<const Node*>> streams_;
  std::unordered_map<const Node*, Info> info_;
};

}  // namespace ge
