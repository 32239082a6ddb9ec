// FlashAttention's body for AVX2 + FMA (this file is compiled with -mavx2 -mfma; called only on
// CPUs that have them).
#include "devices/cpu/kernels/flash_attention_impl.h"

namespace ge::cpu::flash_detail {

void BlocksAvx2(const FlashAttentionArgs& a, int64_t begin, int64_t end) { Blocks<xsimd::avx2>(a, begin, end); }
void DecodeAvx2(const FlashAttentionArgs& a, const DecodeSplit& split, int64_t begin, int64_t end) {
  Decode<xsimd::avx2>(a, split, begin, end);
}
void BackwardAvx2(const FlashAttentionGradArgs& a, int64_t begin, int64_t end) { Backward<xsimd::avx2>(a, begin, end); }

}  // namespace ge::cpu::flash_detail
