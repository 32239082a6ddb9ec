// FlashAttention's body for AVX-512 (this file is compiled with -mavx512f and friends; called only
// on CPUs that have them).
#include "devices/cpu/kernels/flash_attention_impl.h"

namespace ge::cpu::flash_detail {

void BlocksAvx512(const FlashAttentionArgs& a, int64_t begin, int64_t end) { Blocks<xsimd::avx512f>(a, begin, end); }
void DecodeAvx512(const FlashAttentionArgs& a, const DecodeSplit& split, int64_t begin, int64_t end) {
  Decode<xsimd::avx512f>(a, split, begin, end);
}
void BackwardAvx512(const FlashAttentionGradArgs& a, int64_t begin, int64_t end) {
  Backward<xsimd::avx512f>(a, begin, end);
}

}  // namespace ge::cpu::flash_detail
