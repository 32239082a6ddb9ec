// The body of FewPixelBlocks for one xsimd architecture; included by one translation unit per
// instruction set (few_pixel_conv_avx512.cc, few_pixel_conv_avx2.cc), each compiled for it.
#pragma once

#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <array>
#include <utility>

#include "devices/cpu/kernels/few_pixel_conv.h"

namespace ge::cpu::few_pixel_detail {

template <class Arch>
struct Shape {
  using V = xsimd::batch<float, Arch>;
  static constexpr int64_t kLanes = static_cast<int64_t>(V::size);
  static constexpr int kVectors = static_cast<int>(kFewPixelChannels / kLanes);  // per block of channels
  // Pixels per pass over a block's weight: one accumulator per pixel and vector, plus the
  // weight vectors and a broadcast, within the architecture's 32 (AVX-512) or 16 (AVX2) registers.
  static constexpr int kPixels = kVectors == 1 ? 16 : 6;
};

// A block's per-channel vectors: bias, scale and shift for 16 channels, zeros past cout.
struct ChannelTerms {
  alignas(64) float bias[kFewPixelChannels] = {};
  alignas(64) float scale[kFewPixelChannels] = {};
  alignas(64) float shift[kFewPixelChannels] = {};
};

inline ChannelTerms TermsOf(const FewPixelArgs& a, int64_t c0, int64_t channels) {
  ChannelTerms t;
  for (int64_t j = 0; j < channels; ++j) {
    t.bias[j] = a.bias ? a.bias[c0 + j] : 0.f;
    t.scale[j] = a.scale ? a.scale[c0 + j] : 1.f;
    t.shift[j] = a.shift ? a.shift[c0 + j] : 0.f;
  }
  return t;
}

// How far ahead of the step the weight is prefetched, in steps (one 64-byte line each): the
// hardware prefetchers alone kept a cold 9.4 MB weight at ~12 GB/s on 2 Zen 4 cores at the
// rate this loop consumes it; 16-64 lines ahead, ~17 GB/s (the same within noise).
inline constexpr int64_t kPrefetchLines = 32;

// R pixels from p0 against block `block`'s weight: every weight vector is loaded once and
// multiplied by each pixel's broadcast im2col value (R x kVectors independent FMA chains).
template <class Arch, int R>
void Pixels(const FewPixelArgs& a, int64_t block, int64_t p0, const ChannelTerms& terms) {
  using S = Shape<Arch>;
  using V = typename S::V;
  const FewPixelGeometry& g = *a.geometry;
  const int64_t k_depth = g.depth();
  const float* w = a.packed + block * k_depth * kFewPixelChannels;
  const int64_t stride = g.im2col_stride();
  const float* cols = a.cols + p0 * stride;
  V acc[R][S::kVectors];
  for (int r = 0; r < R; ++r)
    for (int l = 0; l < S::kVectors; ++l) acc[r][l] = V(0.f);
  for (int64_t k = 0; k < k_depth; ++k) {
    __builtin_prefetch(w + (k + kPrefetchLines) * kFewPixelChannels);
    V wv[S::kVectors];
    for (int l = 0; l < S::kVectors; ++l) wv[l] = V::load_aligned(w + k * kFewPixelChannels + l * S::kLanes);
    for (int r = 0; r < R; ++r) {
      const V x(cols[r * stride + k]);
      for (int l = 0; l < S::kVectors; ++l) acc[r][l] = xsimd::fma(x, wv[l], acc[r][l]);
    }
  }
  const int64_t c0 = block * kFewPixelChannels, channels = std::min(kFewPixelChannels, g.cout - c0);
  for (int r = 0; r < R; ++r) {
    const int64_t row = (p0 + r) * g.cout + c0;
    alignas(64) float out[kFewPixelChannels];
    for (int l = 0; l < S::kVectors; ++l) {
      const int64_t o = l * S::kLanes;
      V v = (acc[r][l] + V::load_aligned(terms.bias + o)) * V::load_aligned(terms.scale + o) +
            V::load_aligned(terms.shift + o);
      v.store_aligned(out + o);
    }
    for (int64_t j = 0; j < channels; ++j) a.y[row + j] = out[j] + (a.residual ? a.residual[row + j] : 0.f);
  }
}

template <class Arch, size_t... R>
constexpr auto PixelKernels(std::index_sequence<R...>) {
  return std::array<void (*)(const FewPixelArgs&, int64_t, int64_t, const ChannelTerms&), sizeof...(R)>{
      &Pixels<Arch, static_cast<int>(R + 1)>...};
}

template <class Arch>
void Blocks(const FewPixelArgs& a, int64_t begin, int64_t end) {
  constexpr int kPixels = Shape<Arch>::kPixels;
  static constexpr auto kernels = PixelKernels<Arch>(std::make_index_sequence<kPixels>());
  const FewPixelGeometry& g = *a.geometry;
  for (int64_t block = begin; block < end; ++block) {
    const int64_t c0 = block * kFewPixelChannels;
    const ChannelTerms terms = TermsOf(a, c0, std::min(kFewPixelChannels, g.cout - c0));
    for (int64_t p0 = 0; p0 < g.pixels(); p0 += kPixels)
      kernels[static_cast<size_t>(std::min<int64_t>(kPixels, g.pixels() - p0) - 1)](a, block, p0, terms);
  }
}

}  // namespace ge::cpu::few_pixel_detail
