// GemvRows, GemvInterleavedRows and FewColumnRows for AVX-512 (this file is compiled with
// -mavx512f and friends; called only on CPUs that have them).
// GCC 12 takes the _mm512_undefined_ps() operand of the 128-bit block shuffles for an
// uninitialized read (maybe-uninitialized at -O3, uninitialized at -O2 -g with the sanitizers).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include "devices/cpu/kernels/gemv_impl.h"

namespace ge::cpu::gemv_detail {

void RowsAvx512(const GemvArgs& a, int64_t begin, int64_t end) { Rows<xsimd::avx512f>(a, begin, end); }
void InterleavedAvx512(const GemvArgs& a, int64_t begin, int64_t end) { Interleaved<xsimd::avx512f>(a, begin, end); }
void FewColumnsAvx512(const GemvArgs& a, int64_t begin, int64_t end) { FewColumnRows<xsimd::avx512f>(a, begin, end); }

}  // namespace ge::cpu::gemv_detail
