#include "devices/cpu/kernels/max_pool_nhwc.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <limits>

#include "devices/cpu/kernels/isa_dispatch.h"

namespace ge::cpu {
namespace max_pool_detail {

void RowsPortable(const NhwcPoolShape& s, const float* x, float* y, int64_t begin, int64_t end) {
  for (int64_t row = begin; row < end; ++row) {
    const int64_t b = row / s.oh, oy = row % s.oh;
    const int64_t y0 = oy * s.stride[0] - s.pad[0];
    for (int64_t ox = 0; ox < s.ow; ++ox) {
      float* out = y + (row * s.ow + ox) * s.c;
      std::fill(out, out + s.c, -std::numeric_limits<float>::infinity());
      const int64_t x0 = ox * s.stride[1] - s.pad[1];
      for (int64_t iy = std::max<int64_t>(y0, 0); iy < std::min(y0 + s.kernel[0], s.h); ++iy)
        for (int64_t ix = std::max<int64_t>(x0, 0); ix < std::min(x0 + s.kernel[1], s.w); ++ix) {
          const float* in = x + ((b * s.h + iy) * s.w + ix) * s.c;
          for (int64_t ch = 0; ch < s.c; ++ch) out[ch] = MaxKeepingNan(out[ch], in[ch]);
        }
    }
  }
}

}  // namespace max_pool_detail

void MaxPoolNhwc(const NhwcPoolShape& s, const float* x, float* y) {
  static const auto rows =
      ForThisCpu(&max_pool_detail::RowsAvx512, &max_pool_detail::RowsAvx2, &max_pool_detail::RowsPortable);
  // Rows of at least ~16K output floats per work item: less is not worth a thread's wake-up.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(s.ow * s.c, 1));
  at::parallel_for(0, s.n * s.oh, grain, [&](int64_t begin, int64_t end) { rows(s, x, y, begin, end); });
}

}  // namespace ge::cpu
