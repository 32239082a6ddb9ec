// A weight that is a graph input (parameters not frozen) kept in a library's packed layout: packed
// again only when its bytes changed since the last packing. Content decides, not a version
// counter: writes through `p.data`, numpy or DLPack move none. Each call digests the weight --
// XXH3-128 per 1 MiB chunk, on the intra-op threads, compared with the digests of the bytes it
// was last packed from -- a single read of the weight at the memory's bandwidth, where comparing
// it with a snapshot read it and its copy (and kept the copy). A change goes unseen only if every
// changed chunk keeps its 128-bit digest (2^-128 per chunk for any change that is not built to
// collide).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

#include "devices/cpu/kernels/kernel_choice.h"
#include "ge/base/status.h"

namespace ge::cpu {

class RepackOnChange {
 public:
  // Writes `weight` (float32, any strides) in the packed layout into `packed` (packed_bytes).
  using Pack = std::function<Status(const at::Tensor& weight, void* packed)>;

  // `weight`: non-overlapping and dense (its nbytes() from data_ptr() are exactly its elements).
  RepackOnChange(at::Tensor weight, size_t packed_bytes, Pack pack);

  // The packed weight, packed again first if the weight's bytes changed (or on the first call).
  const at::Tensor& Packed();
  // The next Packed() packs again whatever the digests say (the packing also depends on
  // something else that changed: a batch norm folded into the weight).
  void Invalidate() { digests_.clear(); }

  // What a call reads: the weight (digested) and its packing (KernelCandidate::cold).
  std::vector<MemoryRange> Memory() const { return MemoryOf({weight_, packed_}); }

 private:
  bool Changed();  // digests the weight's bytes; true when they differ from the last digests

  at::Tensor weight_, packed_;
  Pack pack_;
  std::vector<std::pair<uint64_t, uint64_t>> digests_;  // per chunk; empty: never packed
};

}  // namespace ge::cpu
