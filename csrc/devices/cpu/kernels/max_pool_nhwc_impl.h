// The body of MaxPoolNhwc for one xsimd architecture; included by one translation unit per
// instruction set (max_pool_nhwc_avx512.cc, max_pool_nhwc_avx2.cc), each compiled for it.
#pragma once

#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <limits>

#include "devices/cpu/kernels/max_pool_nhwc.h"

namespace ge::cpu::max_pool_detail {

template <class Arch>
void Rows(const NhwcPoolShape& s, const float* x, float* y, int64_t begin, int64_t end) {
  using V = xsimd::batch<float, Arch>;
  constexpr int64_t kLanes = static_cast<int64_t>(V::size);
  const int64_t vectors = s.c - s.c % kLanes;
  for (int64_t row = begin; row < end; ++row) {
    const int64_t b = row / s.oh, oy = row % s.oh;
    const int64_t y0 = oy * s.stride[0] - s.pad[0];
    const int64_t iy0 = std::max<int64_t>(y0, 0), iy1 = std::min(y0 + s.kernel[0], s.h);
    for (int64_t ox = 0; ox < s.ow; ++ox) {
      float* out = y + (row * s.ow + ox) * s.c;
      const int64_t x0 = ox * s.stride[1] - s.pad[1];
      const int64_t ix0 = std::max<int64_t>(x0, 0), ix1 = std::min(x0 + s.kernel[1], s.w);
      // A vector of channels at a time through the whole window, in a register.
      for (int64_t ch = 0; ch < vectors; ch += kLanes) {
        V acc(-std::numeric_limits<float>::infinity());
        for (int64_t iy = iy0; iy < iy1; ++iy)
          for (int64_t ix = ix0; ix < ix1; ++ix) {
            const V v = V::load_unaligned(x + ((b * s.h + iy) * s.w + ix) * s.c + ch);
            acc = xsimd::select((v > acc) | xsimd::isnan(v), v, acc);  // MaxKeepingNan per lane
          }
        acc.store_unaligned(out + ch);
      }
      for (int64_t ch = vectors; ch < s.c; ++ch) {
        float acc = -std::numeric_limits<float>::infinity();
        for (int64_t iy = iy0; iy < iy1; ++iy)
          for (int64_t ix = ix0; ix < ix1; ++ix) acc = MaxKeepingNan(acc, x[((b * s.h + iy) * s.w + ix) * s.c + ch]);
        out[ch] = acc;
      }
    }
  }
}

}  // namespace ge::cpu::max_pool_detail
