// MaxPoolNhwc's rows for AVX-512 (this file is compiled with -mavx512f and friends; called only
// on CPUs that have them).
#include "devices/cpu/kernels/max_pool_nhwc_impl.h"

namespace ge::cpu::max_pool_detail {

void RowsAvx512(const NhwcPoolShape& s, const float* x, float* y, int64_t begin, int64_t end) {
  Rows<xsimd::avx512f>(s, x, y, begin, end);
}

}  // namespace ge::cpu::max_pool_detail
