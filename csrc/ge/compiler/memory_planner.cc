#include "ge/compiler/memory_planner.h"

#include <algorithm>
#include <climits>
#include <numeric>

namespace ge {
namespace {

int64_t Align(int64_t bytes) { return (std::max<int64_t>(bytes, 1) + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

bool LifetimesOverlap(const BufferRequest& a, const BufferRequest& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

// Greedy by size, best fit: the largest buffers are placed first, each in the smallest gap
// left between already-placed buffers whose lifetimes overlap its own (or above them all).
std::vector<int64_t> GreedyBySize(const std::vector<BufferRequest>& requests, int64_t* arena) {
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (Align(requests[a].size) != Align(requests[b].size)) return Align(requests[a].size) > Align(requests[b].size);
    return requests[a].first_step < requests[b].first_step;
  });
  std::vector<int64_t> offsets(requests.size(), -1);
  std::vector<size_t> placed;
  *arena = 0;
  std::vector<size_t> conflicts;
  for (size_t id : order) {
    const int64_t size = Align(requests[id].size);
    conflicts.clear();
    for (size_t other : placed)
      if (LifetimesOverlap(requests[id], requests[other])) conflicts.push_back(other);
    std::sort(conflicts.begin(), conflicts.end(), [&](size_t a, size_t b) { return offsets[a] < offsets[b]; });
    int64_t best = -1, best_gap = INT64_MAX, end = 0;
    for (size_t other : conflicts) {
      const int64_t gap = offsets[other] - end;
      if (gap >= size && gap < best_gap) {
        best = end;
        best_gap = gap;
      }
      end = std::max(end, offsets[other] + Align(requests[other].size));
    }
    offsets[id] = best >= 0 ? best : end;
    *arena = std::max(*arena, offsets[id] + size);
    placed.push_back(id);
  }
  return offsets;
}

}  // namespace

ArenaPlan PlanArena(const std::vector<BufferRequest>& requests, bool reuse) {
  ArenaPlan plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return requests[a].first_step < requests[b].first_step; });

  std::vector<size_t> live;  // placed buffers, kept sorted by offset
  for (size_t id : order) {
    const BufferRequest& req = requests[id];
    const int64_t size = Align(req.size);
    plan.no_reuse_size += size;
    live.erase(std::remove_if(live.begin(), live.end(), [&](size_t o) { return requests[o].last_step < req.first_step; }),
               live.end());
    int64_t offset = 0;
    for (size_t other : live) {
      if (plan.offsets[other] - offset >= size) break;
      offset = std::max(offset, plan.offsets[other] + Align(requests[other].size));
    }
    plan.offsets[id] = offset;
    plan.arena_size = std::max(plan.arena_size, offset + size);
    live.insert(std::upper_bound(live.begin(), live.end(), id,
                                 [&](size_t a, size_t b) { return plan.offsets[a] < plan.offsets[b]; }),
                id);
  }

  if (!reuse) {  // every buffer its own bytes: for debugging the planner away
    int64_t offset = 0;
    for (size_t id : order) {
      plan.offsets[id] = offset;
      offset += Align(requests[id].size);
    }
    plan.arena_size = offset;
  } else {
    int64_t greedy_arena = 0;
    std::vector<int64_t> greedy = GreedyBySize(requests, &greedy_arena);
    if (greedy_arena < plan.arena_size) {  // keep whichever packs tighter
      plan.offsets = std::move(greedy);
      plan.arena_size = greedy_arena;
    }
  }

  int32_t last = 0;
  for (const auto& r : requests) last = std::max(last, r.last_step);
  std::vector<int64_t> live_bytes(static_cast<size_t>(last) + 1, 0);
  for (const auto& r : requests)
    for (int32_t s = r.first_step; s <= r.last_step; ++s) live_bytes[static_cast<size_t>(s)] += Align(r.size);
  for (int64_t b : live_bytes) plan.lower_bound = std::max(plan.lower_bound, b);
  return plan;
}

Status CheckArenaPlan(const std::vector<BufferRequest>& requests, const ArenaPlan& plan) {
  GE_CHECK(plan.offsets.size() == requests.size(), "plan has {} offsets for {} buffers", plan.offsets.size(),
           requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    GE_CHECK(plan.offsets[i] % kArenaAlignment == 0, "buffer {} offset {} is not aligned", i, plan.offsets[i]);
    GE_CHECK(plan.offsets[i] >= 0 && plan.offsets[i] + requests[i].size <= plan.arena_size,
             "buffer {} [{}, +{}) lies outside the arena of {}", i, plan.offsets[i], requests[i].size, plan.arena_size);
    for (size_t j = i + 1; j < requests.size(); ++j) {
      if (!LifetimesOverlap(requests[i], requests[j])) continue;
      const bool disjoint = plan.offsets[i] + requests[i].size <= plan.offsets[j] ||
                            plan.offsets[j] + requests[j].size <= plan.offsets[i];
      GE_CHECK(disjoint, "buffers {} and {} are live together and overlap", i, j);
    }
  }
  return {};
}

}  // namespace ge
