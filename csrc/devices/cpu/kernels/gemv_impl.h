// The body of GemvRows for one xsimd architecture; included by one translation unit per
// instruction set (gemv_avx512.cc, gemv_avx2.cc), each compiled for it.
#pragma once

#include <xsimd/xsimd.hpp>

#include "devices/cpu/kernels/gemv.h"

namespace ge::cpu::gemv_detail {

// Two weight rows at a time, each dotted with every input row: 2 x rows independent FMA chains
// hide the FMA latency; the x rows (a few KiB) are re-read from L1.
template <class Arch>
void Rows(const GemvArgs& a, int64_t begin, int64_t end) {
  using V = xsimd::batch<float, Arch>;
  constexpr int64_t kW = static_cast<int64_t>(V::size);
  const int64_t k_vec = a.k - a.k % kW;
  for (int64_t j = begin; j < end; j += 2) {
    const bool pair = j + 1 < end;
    const float* w0 = a.w + j * a.k;
    const float* w1 = pair ? w0 + a.k : w0;
    V acc0[kGemvMaxRows], acc1[kGemvMaxRows];
    for (int64_t m = 0; m < a.rows; ++m) acc0[m] = acc1[m] = V(0.f);
    for (int64_t i = 0; i < k_vec; i += kW) {
      const V a0 = V::load_unaligned(w0 + i), a1 = V::load_unaligned(w1 + i);
      for (int64_t m = 0; m < a.rows; ++m) {
        const V xv = V::load_unaligned(a.x + m * a.x_stride + i);
        acc0[m] = xsimd::fma(a0, xv, acc0[m]);
        acc1[m] = xsimd::fma(a1, xv, acc1[m]);
      }
    }
    for (int64_t m = 0; m < a.rows; ++m) {
      float s0 = xsimd::hadd(acc0[m]), s1 = xsimd::hadd(acc1[m]);
      const float* xr = a.x + m * a.x_stride;
      for (int64_t i = k_vec; i < a.k; ++i) {
        s0 += w0[i] * xr[i];
        s1 += w1[i] * xr[i];
      }
      float* yr = a.y + m * a.y_stride;
      yr[j] = s0 + (a.bias ? a.bias[j] : 0.f);
      if (pair) yr[j + 1] = s1 + (a.bias ? a.bias[j + 1] : 0.f);
    }
  }
}

void RowsAvx512(const GemvArgs& a, int64_t begin, int64_t end);
void RowsAvx2(const GemvArgs& a, int64_t begin, int64_t end);

}  // namespace ge::cpu::gemv_detail
