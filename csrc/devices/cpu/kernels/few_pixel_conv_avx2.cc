// FewPixelBlocks and FewPixelRows for AVX2 + FMA (this file is compiled with -mavx2 -mfma; called
// only on CPUs that have them).
#include "devices/cpu/kernels/few_pixel_conv_impl.h"

namespace ge::cpu::few_pixel_detail {

void BlocksAvx2(const FewPixelArgs& a, int64_t begin, int64_t end) { Blocks<xsimd::fma3<xsimd::avx2>>(a, begin, end); }

void RowsAvx2(const FewPixelArgs& a, int64_t begin, int64_t end) { Rows<xsimd::fma3<xsimd::avx2>>(a, begin, end); }

}  // namespace ge::cpu::few_pixel_detail
