// FewPixelBlocks and FewPixelRows for AVX-512 (this file is compiled with -mavx512f and friends;
// called only on CPUs that have them).
#include "devices/cpu/kernels/few_pixel_conv_impl.h"

namespace ge::cpu::few_pixel_detail {

void BlocksAvx512(const FewPixelArgs& a, int64_t begin, int64_t end) { Blocks<xsimd::avx512f>(a, begin, end); }

void RowsAvx512(const FewPixelArgs& a, int64_t begin, int64_t end) { Rows<xsimd::avx512f>(a, begin, end); }

}  // namespace ge::cpu::few_pixel_detail
