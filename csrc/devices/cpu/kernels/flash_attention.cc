#include "devices/cpu/kernels/flash_attention.h"

#include <ATen/Parallel.h>

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

}  // namespace

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
