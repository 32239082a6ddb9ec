// MaxPoolNhwc's rows for AVX2 (this file is compiled with -mavx2 -mfma; called only on CPUs that
// have them).
#include "devices/cpu/kernels/max_pool_nhwc_impl.h"

namespace ge::cpu::max_pool_detail {

void RowsAvx2(const NhwcPoolShape& s, const float* x, float* y, int64_t begin, int64_t end) {
  Rows<xsimd::fma3<xsimd::avx2>>(s, x, y, begin, end);
}

}  // namespace ge::cpu::max_pool_detail
