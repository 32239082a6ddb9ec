// GemvRows, GemvInterleavedRows and FewColumnRows for AVX2 with FMA (this file is compiled with
// -mavx2 -mfma; called only on CPUs that have them).
#include "devices/cpu/kernels/gemv_impl.h"

namespace ge::cpu::gemv_detail {

void RowsAvx2(const GemvArgs& a, int64_t begin, int64_t end) { Rows<xsimd::fma3<xsimd::avx2>>(a, begin, end); }
void InterleavedAvx2(const GemvArgs& a, int64_t begin, int64_t end) {
  Interleaved<xsimd::fma3<xsimd::avx2>>(a, begin, end);
}
void FewColumnsAvx2(const GemvArgs& a, int64_t begin, int64_t end) {
  FewColumnRows<xsimd::fma3<xsimd::avx2>>(a, begin, end);
}

}  // namespace ge::cpu::gemv_detail
