// The bodies of FewPixelBlocks and FewPixelRows for one xsimd architecture; included by one
// translation unit per instruction set (few_pixel_conv_avx512.cc, few_pixel_conv_avx2.cc), each
// compiled for it.
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
inline constexpr int64_t kLineFloats = 16;  // floats in a 64-byte cache line

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

// How far ahead the unpacked kernel prefetches each pixel's im2col row, in lines: a tile reads its
// pixels' rows (6 x 9 KB at a 3x3x256 window) from L2 beside the weight rows, more streams than
// the L1 prefetcher follows. 4 lines ahead took ResNet's 7x7 x 256 convolutions (49 pixels) from
// 333-380 to 300-312 us a run in resnet_b1 (Intel Xeon, AVX-512; 8 lines ahead 320-350).
inline constexpr int64_t kColsPrefetchLines = 4;

// The unpacked kernel's tile: kRows weight rows against up to kPixels pixels, one accumulator
// each, plus the rows' vectors and a pixel's vector within the architecture's 32 (AVX-512) or 16
// (AVX2) registers. Each step loads kRows + pixels vectors for kRows x pixels FMAs.
template <class Arch>
struct RowShape {
  using V = xsimd::batch<float, Arch>;
  static constexpr int kRows = V::size == 16 ? 4 : 2;
  static constexpr int kPixels = V::size == 16 ? 6 : 5;
};

// Weight rows [c0, c0 + rows) (rows <= kRows; the tile's spare lanes re-read the last row and
// store nothing) against the R pixels from p0, whole rows of K.
template <class Arch, int R>
void RowTile(const FewPixelArgs& a, int64_t c0, int64_t rows, int64_t p0) {
  using S = RowShape<Arch>;
  using V = typename S::V;
  constexpr int C = S::kRows;
  constexpr int64_t kLanes = static_cast<int64_t>(V::size);
  const FewPixelGeometry& g = *a.geometry;
  const int64_t k_depth = g.depth(), stride = g.im2col_stride(), k_vectors = k_depth - k_depth % kLanes;
  const float* w[C];
  for (int c = 0; c < C; ++c) w[c] = a.rows + (c0 + std::min<int64_t>(c, rows - 1)) * k_depth;
  const float* x = a.cols + p0 * stride;
  V acc[C][R];
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < R; ++r) acc[c][r] = V(0.f);
  for (int64_t k = 0; k < k_vectors; k += kLanes) {
    V wv[C];
    for (int c = 0; c < C; ++c) {
      __builtin_prefetch(w[c] + k + kPrefetchLines * kLineFloats);
      wv[c] = V::load_unaligned(w[c] + k);
    }
    for (int r = 0; r < R; ++r) {
      __builtin_prefetch(x + r * stride + k + kColsPrefetchLines * kLineFloats);
      const V xv = V::load_aligned(x + r * stride + k);  // rows start on cache lines
      for (int c = 0; c < C; ++c) acc[c][r] = xsimd::fma(wv[c], xv, acc[c][r]);
    }
  }
  for (int c = 0; c < rows; ++c)
    for (int r = 0; r < R; ++r) {
      float s = xsimd::hadd(acc[c][r]);
      for (int64_t k = k_vectors; k < k_depth; ++k) s += w[c][k] * x[r * stride + k];
      const int64_t at = (p0 + r) * g.cout + c0 + c;
      a.y[at] = Output(a, c0 + c, at, s);
    }
}

template <class Arch, size_t... R>
constexpr auto RowTiles(std::index_sequence<R...>) {
  return std::array<void (*)(const FewPixelArgs&, int64_t, int64_t, int64_t), sizeof...(R)>{
      &RowTile<Arch, static_cast<int>(R + 1)>...};
}

// Output channels [begin, end), kRows at a time; the pixels in as few tiles as kPixels allows,
// evened out (16 pixels: 6 + 5 + 5, not 6 + 6 + 4).
template <class Arch>
void Rows(const FewPixelArgs& a, int64_t begin, int64_t end) {
  using S = RowShape<Arch>;
  static constexpr auto tiles = RowTiles<Arch>(std::make_index_sequence<S::kPixels>());
  const int64_t pixels = a.geometry->pixels();
  const int64_t passes = (pixels + S::kPixels - 1) / S::kPixels;
  for (int64_t c0 = begin; c0 < end; c0 += S::kRows) {
    const int64_t rows = std::min<int64_t>(S::kRows, end - c0);
    for (int64_t pass = 0, p0 = 0; pass < passes; ++pass) {
      const int64_t r = (pixels - p0 + (passes - pass) - 1) / (passes - pass);
      tiles[static_cast<size_t>(r - 1)](a, c0, rows, p0);
      p0 += r;
    }
  }
}

}  // namespace ge::cpu::few_pixel_detail
