#include "devices/cpu/kernels/transpose_rows.h"

#include <ATen/Parallel.h>
#include <immintrin.h>

#include <algorithm>

#include "devices/cpu/kernels/isa_dispatch.h"

namespace ge::cpu {
namespace {

constexpr int64_t kTile = 8;

// Any tile, element by element (the edges, and CPUs without AVX2).
void TileScalar(const float* c, int64_t cols, const float* bias, float* y, int64_t y_stride, int64_t rows_here,
                int64_t cols_here) {
  for (int64_t m = 0; m < cols_here; ++m)
    for (int64_t n = 0; n < rows_here; ++n) y[m * y_stride + n] = c[n * cols + m] + (bias ? bias[n] : 0.f);
}

// A whole 8 x 8 tile in registers: eight row loads, three rounds of shuffles, eight row stores.
// (xsimd 8, the library's SIMD layer, has no transpose; GCC's own vectorization of the plain
// loop ran at half this speed.)
__attribute__((target("avx2"))) void Tile8Avx2(const float* c, int64_t cols, const float* bias, float* y,
                                               int64_t y_stride) {
  __m256 r[8], t[8], s[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(c + i * cols);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    s[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    s[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    s[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    s[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  const __m256 b = bias ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(y + i * y_stride, _mm256_add_ps(_mm256_permute2f128_ps(s[i], s[i + 4], 0x20), b));
    _mm256_storeu_ps(y + (i + 4) * y_stride, _mm256_add_ps(_mm256_permute2f128_ps(s[i], s[i + 4], 0x31), b));
  }
}

void Tile8Scalar(const float* c, int64_t cols, const float* bias, float* y, int64_t y_stride) {
  TileScalar(c, cols, bias, y, y_stride, kTile, kTile);
}

}  // namespace

void TransposeAddBias(const float* c, int64_t rows, int64_t cols, const float* bias, float* y, int64_t y_stride) {
  static const auto tile8 = ForThisCpu(&Tile8Avx2, &Tile8Avx2, &Tile8Scalar);
  // Items are tiles, band by band: a product's yᵀ (1408 x 64) and an image's three channels
  // (3 x 12544) both split over the threads. A thread's share is worth a parallel region from
  // ~8K elements on.
  const int64_t bands = (rows + kTile - 1) / kTile, tiles_per_band = (cols + kTile - 1) / kTile;
  const int64_t grain = std::max<int64_t>(1, 8192 / (kTile * kTile));
  at::parallel_for(0, bands * tiles_per_band, grain, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t n0 = item / tiles_per_band * kTile, m0 = item % tiles_per_band * kTile;
      const int64_t rows_here = std::min(kTile, rows - n0), cols_here = std::min(kTile, cols - m0);
      const float* b = bias ? bias + n0 : nullptr;
      const float* in = c + n0 * cols + m0;
      float* out = y + m0 * y_stride + n0;
      if (rows_here == kTile && cols_here == kTile)
        tile8(in, cols, b, out, y_stride);
      else
        TileScalar(in, cols, b, out, y_stride, rows_here, cols_here);
    }
  });
}

}  // namespace ge::cpu
