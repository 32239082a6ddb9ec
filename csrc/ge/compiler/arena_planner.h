// The arena planner: a pure function from buffer sizes and lifetimes to offsets in one arena.
#pragma once

#include <cstdint>
#include <vector>

#include "ge/base/status.h"

namespace ge {

struct BufferRequest {
  int64_t size;        // bytes
  int32_t first_step;  // schedule step that writes the buffer
  int32_t last_step;   // last step that reads it (inclusive; == first_step if never read)
};

struct ArenaPlan {
  int64_t arena_size = 0;
  std::vector<int64_t> offsets;  // one per request
  int64_t lower_bound = 0;       // the largest sum of (aligned) live bytes at any step
  int64_t no_reuse_size = 0;     // what the arena would be with no reuse at all
};

inline constexpr int64_t kArenaAlignment = 64;

// Plans with several heuristics and keeps the smallest arena: first fit in order of first use
// (each buffer takes the lowest gap between the buffers still live), and greedy best fit (each
// in the tightest gap among the buffers its lifetime overlaps) placing the largest, the
// longest-lived, or the largest size x lifetime first.
// Buffers whose lifetimes overlap never share bytes; every offset is kArenaAlignment-aligned.
// With reuse=false every buffer gets bytes of its own (option ge.exec.disableReuseMemory).
ArenaPlan PlanArena(const std::vector<BufferRequest>& requests, bool reuse = true);

// The invariant checker used by tests: alignment, in-bounds, and no overlap between buffers
// whose lifetimes intersect.
Status CheckArenaPlan(const std::vector<BufferRequest>& requests, const ArenaPlan& plan);

}  // namespace ge
