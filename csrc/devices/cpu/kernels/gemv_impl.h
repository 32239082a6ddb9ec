// The body of GemvRows for one xsimd architecture; included by one translation unit per
// instruction set (gemv_avx512.cc, gemv_avx2.cc), each compiled for it.
#pragma once

#include <xsimd/xsimd.hpp>

#include "devices/cpu/kernels/gemv.h"

namespace ge::cpu::gemv_detail {

// One weight row at a time, read front to back: a thread's share of the weight is then one
// sequential stream, which the hardware prefetchers follow at the memory's read bandwidth
// (measured on a Zen 4, 2 threads: ~39 GB/s against ~26 GB/s when two rows were walked side by
// side). Two vectors of the row per step, each dotted with every input row, give 2 x rows
// independent FMA chains; the x rows (a few KiB) are re-read from L1.
template <class Arch>
void Rows(const GemvArgs& a, int64_t begin, int64_t end) {
  using V = xsimd::batch<float, Arch>;
  constexpr int64_t kW = static_cast<int64_t>(V::size);
  const int64_t k_pairs = a.k - a.k % (2 * kW), k_vec = a.k - a.k % kW;
  for (int64_t j = begin; j < end; ++j) {
    const float* w = a.w + j * a.k;
    V acc0[kGemvMaxRows], acc1[kGemvMaxRows];
    for (int64_t m = 0; m < a.rows; ++m) acc0[m] = acc1[m] = V(0.f);
    for (int64_t i = 0; i < k_pairs; i += 2 * kW) {
      const V w0 = V::load_unaligned(w + i), w1 = V::load_unaligned(w + i + kW);
      for (int64_t m = 0; m < a.rows; ++m) {
        const float* xr = a.x + m * a.x_stride + i;
        acc0[m] = xsimd::fma(w0, V::load_unaligned(xr), acc0[m]);
        acc1[m] = xsimd::fma(w1, V::load_unaligned(xr + kW), acc1[m]);
      }
    }
    if (k_vec > k_pairs) {
      const V w0 = V::load_unaligned(w + k_pairs);
      for (int64_t m = 0; m < a.rows; ++m)
        acc0[m] = xsimd::fma(w0, V::load_unaligned(a.x + m * a.x_stride + k_pairs), acc0[m]);
    }
    for (int64_t m = 0; m < a.rows; ++m) {
      const float* xr = a.x + m * a.x_stride;
      float s = xsimd::hadd(acc0[m] + acc1[m]);
      for (int64_t i = k_vec; i < a.k; ++i) s += w[i] * xr[i];
      a.y[m * a.y_stride + j] = s + (a.bias ? a.bias[j] : 0.f);
    }
  }
}

}  // namespace ge::cpu::gemv_detail
