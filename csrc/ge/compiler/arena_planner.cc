#include "ge/compiler/arena_planner.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <random>
#include <numeric>

namespace ge {
namespace {

int64_t Align(int64_t bytes) {
  return (std::max<int64_t>(bytes, 1) + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

bool LifetimesOverlap(const BufferRequest& a, const BufferRequest& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

// The largest sum of aligned bytes live at one step: no plan can use less.
int64_t LowerBound(const std::vector<BufferRequest>& requests) {
  int32_t last = 0;
  for (const auto& r : requests) last = std::max(last, r.last_step);
  std::vector<int64_t> live_bytes(static_cast<size_t>(last) + 1, 0);
  for (const auto& r : requests)
    for (int32_t s = r.first_step; s <= r.last_step; ++s) live_bytes[static_cast<size_t>(s)] += Align(r.size);
  int64_t bound = 0;
  for (int64_t b : live_bytes) bound = std::max(bound, b);
  return bound;
}

constexpr int kPerturbations = 64;

// Greedy best fit in a given priority order: each buffer goes into the smallest gap left
// between already-placed buffers whose lifetimes overlap its own (or above them all).
std::vector<int64_t> GreedyBestFit(const std::vector<BufferRequest>& requests, const std::vector<size_t>& order,
                                   int64_t* arena) {
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

// Placement priorities for GreedyBestFit: largest first; longest-lived first; largest
// size x lifetime first; in order of first use (ties: earlier first use).
std::vector<std::vector<size_t>> PriorityOrders(const std::vector<BufferRequest>& requests) {
  auto span = [&](size_t i) { return static_cast<int64_t>(requests[i].last_step - requests[i].first_step + 1); };
  const std::vector<std::function<int64_t(size_t)>> keys = {
      [&](size_t i) { return Align(requests[i].size); }, [&](size_t i) { return span(i); },
      [&](size_t i) { return Align(requests[i].size) * span(i); },
      [&](size_t i) { return -static_cast<int64_t>(requests[i].first_step); },  // in order of first use
  };
  std::vector<std::vector<size_t>> orders;
  for (const auto& key : keys) {
    std::vector<size_t> order(requests.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (key(a) != key(b)) return key(a) > key(b);
      return requests[a].first_step < requests[b].first_step;
    });
    orders.push_back(std::move(order));
  }
  return orders;
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
    live.erase(
        std::remove_if(live.begin(), live.end(), [&](size_t o) { return requests[o].last_step < req.first_step; }),
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
    auto consider = [&](const std::vector<size_t>& priority) {
      int64_t greedy_arena = 0;
      std::vector<int64_t> greedy = GreedyBestFit(requests, priority, &greedy_arena);
      if (greedy_arena < plan.arena_size) {  // keep whichever packs tighter
        plan.offsets = std::move(greedy);
        plan.arena_size = greedy_arena;
      }
    };
    const std::vector<std::vector<size_t>> priorities = PriorityOrders(requests);
    for (const auto& priority : priorities) consider(priority);
    // Still above the bound: a few seeded random perturbations of the largest-first order
    // (swapping neighbours of similar size) often close the last gap. Deterministic.
    const int64_t bound = LowerBound(requests);
    std::mt19937 rng(12345);
    for (int attempt = 0; attempt < kPerturbations && plan.arena_size > bound; ++attempt) {
      std::vector<size_t> order = priorities[static_cast<size_t>(attempt) % priorities.size()];
      for (size_t i = 1; i < order.size(); ++i)
        if (rng() % 3 == 0) std::swap(order[i - 1], order[i]);
      consider(order);
    }
  }

  plan.lower_bound = LowerBound(requests);
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
