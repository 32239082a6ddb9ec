#include "devices/cpu/kernels/flash_attention.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "devices/cpu/kernels/isa_dispatch.h"

namespace ge::cpu {
namespace {

using BlocksFn = void (*)(const FlashAttentionArgs&, int64_t, int64_t);

BlocksFn BlocksForThisCpu() {
  static const BlocksFn blocks = ForThisCpu<BlocksFn>(&flash_detail::BlocksAvx512, &flash_detail::BlocksAvx2, nullptr);
  return blocks;
}

using BackwardFn = void (*)(const FlashAttentionGradArgs&, int64_t, int64_t);

BackwardFn BackwardForThisCpu() {
  static const BackwardFn backward =
      ForThisCpu<BackwardFn>(&flash_detail::BackwardAvx512, &flash_detail::BackwardAvx2, nullptr);
  return backward;
}

using DecodeFn = void (*)(const FlashAttentionArgs&, const flash_detail::DecodeSplit&, int64_t, int64_t);

DecodeFn DecodeForThisCpu() {
  static const DecodeFn decode = ForThisCpu<DecodeFn>(&flash_detail::DecodeAvx512, &flash_detail::DecodeAvx2, nullptr);
  return decode;
}

// A chunk of keys is worth a task from this many keys on (a decode step's few rows make a short
// chunk cost little more than the task's start and its merge).
constexpr int64_t kMinChunkKeys = 256;

// Enough tasks for every intra-op thread twice over, or one per (batch, key/value head) where
// those are enough.
int64_t DecodeChunks(const FlashAttentionArgs& a) {
  const int64_t heads = a.batch * a.kv_heads, wanted = 2 * static_cast<int64_t>(at::get_num_threads());
  if (heads >= wanted) return 1;
  return std::clamp<int64_t>((wanted + heads - 1) / heads, 1, std::max<int64_t>(1, a.kv_len / kMinChunkKeys));
}

// Each row's output and log-sum-exp from its chunks' states (DecodeSplit::partials): the chunks'
// sums and outputs rescaled to the largest of their maxima. A row no chunk saw a key of gets
// zeros and a log-sum-exp of 0, as FlashAttention gives it.
void MergeDecodeChunks(const FlashAttentionArgs& a, const flash_detail::DecodeSplit& split, int64_t bkv) {
  const int64_t d_len = a.head_dim, group = a.q_heads / a.kv_heads, rows = group * a.q_len, state = d_len + 2;
  const int64_t b = bkv / a.kv_heads, kvh = bkv % a.kv_heads;
  const float* chunk0 = split.partials + bkv * split.chunks * rows * state;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t h = kvh * group + r / a.q_len, i = r % a.q_len;
    float* out = a.out + b * a.out_strides[0] + h * a.out_strides[1] + i * a.out_strides[2];
    float max = -std::numeric_limits<float>::infinity(), sum = 0.f;
    for (int64_t c = 0; c < split.chunks; ++c) max = std::max(max, chunk0[(c * rows + r) * state]);
    std::fill(out, out + d_len, 0.f);
    if (max != -std::numeric_limits<float>::infinity()) {
      for (int64_t c = 0; c < split.chunks; ++c) {
        const float* s = chunk0 + (c * rows + r) * state;
        const float weight = std::exp(s[0] - max);  // 0 for a chunk that saw no key of the row
        sum += s[1] * weight;
        for (int64_t d = 0; d < d_len; ++d) out[d] += s[2 + d] * weight;
      }
      for (int64_t d = 0; d < d_len; ++d) out[d] /= sum;
    }
    if (a.lse != nullptr)
      a.lse[b * a.lse_strides[0] + h * a.lse_strides[1] + i * a.lse_strides[2]] =
          sum == 0.f ? 0.f : max + std::log(sum);
  }
}

}  // namespace

bool DecodeAttentionApplies(const FlashAttentionArgs& shape) {
  return DecodeForThisCpu() != nullptr && FlashAttentionApplies(shape.head_dim) && shape.kv_heads > 0 &&
         shape.q_heads % shape.kv_heads == 0 && shape.q_len > 0 &&
         shape.q_heads / shape.kv_heads * shape.q_len <= kDecodeMaxRows;
}

void DecodeAttention(const FlashAttentionArgs& a, int64_t key_chunks) {
  flash_detail::DecodeSplit split;
  split.chunks = std::max<int64_t>(1, key_chunks > 0 ? key_chunks : DecodeChunks(a));
  const int64_t keys_per_chunk = (a.kv_len + split.chunks - 1) / split.chunks;
  split.chunk_len = std::max<int64_t>(1, (keys_per_chunk + flash_detail::kKeyBlock - 1) / flash_detail::kKeyBlock) *
                    flash_detail::kKeyBlock;
  split.chunks = std::max<int64_t>(1, (a.kv_len + split.chunk_len - 1) / split.chunk_len);  // none empty
  const int64_t heads = a.batch * a.kv_heads, rows = a.q_heads / a.kv_heads * a.q_len;
  // The chunks' states, in a buffer of the calling thread kept between runs.
  thread_local std::vector<float> partials;
  if (split.chunks > 1) {
    partials.resize(std::max(partials.size(), static_cast<size_t>(heads * split.chunks * rows * (a.head_dim + 2))));
    split.partials = partials.data();
  }
  const DecodeFn decode = DecodeForThisCpu();
  at::parallel_for(0, heads * split.chunks, 1, [&](int64_t begin, int64_t end) { decode(a, split, begin, end); });
  if (split.chunks > 1)
    at::parallel_for(0, heads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t bkv = begin; bkv < end; ++bkv) MergeDecodeChunks(a, split, bkv);
    });
}

bool FlashAttentionApplies(int64_t head_dim) {
  return BlocksForThisCpu() != nullptr && head_dim > 0 && head_dim % 16 == 0 && head_dim <= 256;
}

void FlashAttention(const FlashAttentionArgs& a) {
  const int64_t q_blocks = (a.q_len + flash_detail::kQueryBlock - 1) / flash_detail::kQueryBlock;
  const BlocksFn blocks = BlocksForThisCpu();
  at::parallel_for(0, a.batch * a.q_heads * q_blocks, 1, [&](int64_t begin, int64_t end) { blocks(a, begin, end); });
}

void FlashAttentionBackward(const FlashAttentionGradArgs& a) {
  const BackwardFn backward = BackwardForThisCpu();
  at::parallel_for(0, a.forward.batch * a.forward.kv_heads, 1,
                   [&](int64_t begin, int64_t end) { backward(a, begin, end); });
}

}  // namespace ge::cpu
