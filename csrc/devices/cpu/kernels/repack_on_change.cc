#include "devices/cpu/kernels/repack_on_change.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>

#include <atomic>
#include <utility>

namespace ge::cpu {
namespace {

constexpr int64_t kChunkBytes = int64_t{1} << 20;

}  // namespace

RepackOnChange::RepackOnChange(at::Tensor weight, size_t packed_bytes, Pack pack)
    : weight_(std::move(weight)),
      packed_(at::empty({static_cast<int64_t>(packed_bytes)}, weight_.options().dtype(at::kByte))),
      pack_(std::move(pack)) {}

bool RepackOnChange::Changed() {
  // The weight's bytes as stored (a dense tensor in any order: what the packing reads).
  const auto* bytes = static_cast<const char*>(weight_.const_data_ptr());
  const int64_t n = static_cast<int64_t>(weight_.nbytes());
  const int64_t chunks = (n + kChunkBytes - 1) / kChunkBytes;
  const bool first = digests_.empty();
  if (first) digests_.resize(static_cast<size_t>(chunks));
  std::atomic<bool> changed{first};
  at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const int64_t offset = c * kChunkBytes;
      const XXH128_hash_t h = XXH3_128bits(bytes + offset, static_cast<size_t>(std::min(kChunkBytes, n - offset)));
      auto& digest = digests_[static_cast<size_t>(c)];
      if (digest.first != h.low64 || digest.second != h.high64) {
        digest = {h.low64, h.high64};
        changed.store(true, std::memory_order_relaxed);
      }
    }
  });
  return changed.load();
}

const at::Tensor& RepackOnChange::Packed() {
  if (Changed()) {
    const Status packed = pack_(weight_, packed_.data_ptr());
    if (!packed.ok()) digests_.clear();  // packed by the next call, not taken as packed
    TORCH_CHECK(packed.ok(), packed.message());
  }
  return packed_;
}

}  // namespace ge::cpu
