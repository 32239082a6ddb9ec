// The body of GemvRows for one xsimd architecture; included by one translation unit per
// instruction set (gemv_avx512.cc, gemv_avx2.cc), each compiled for it.
#pragma once

#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "devices/cpu/kernels/gemv.h"

namespace ge::cpu::gemv_detail {

// One weight row at a time, read front to back: a thread's share of the weight is then one
// sequential stream, which the hardware prefetchers follow at the memory's read bandwidth
// (measured on a Zen 4, 2 threads: ~39 GB/s against ~26 GB/s when two rows were walked side by
// side). Two vectors of the row per step, each dotted with every input row, give 2 x kM
// independent FMA chains; the x rows (a few KiB) are re-read from L1. kM, the input rows, is a
// template argument so that the accumulators live in registers.
template <class Arch, int64_t kM>
void RowsOf(const GemvArgs& a, int64_t begin, int64_t end) {
  using V = xsimd::batch<float, Arch>;
  constexpr int64_t kW = static_cast<int64_t>(V::size);
  const int64_t k_pairs = a.k - a.k % (2 * kW), k_vec = a.k - a.k % kW;
  for (int64_t j = begin; j < end; ++j) {
    const float* w = a.w + j * a.k;
    V acc0[kM], acc1[kM];
    for (int64_t m = 0; m < kM; ++m) acc0[m] = acc1[m] = V(0.f);
    for (int64_t i = 0; i < k_pairs; i += 2 * kW) {
      const V w0 = V::load_unaligned(w + i), w1 = V::load_unaligned(w + i + kW);
      for (int64_t m = 0; m < kM; ++m) {
        const float* xr = a.x + m * a.x_stride + i;
        acc0[m] = xsimd::fma(w0, V::load_unaligned(xr), acc0[m]);
        acc1[m] = xsimd::fma(w1, V::load_unaligned(xr + kW), acc1[m]);
      }
    }
    if (k_vec > k_pairs) {
      const V w0 = V::load_unaligned(w + k_pairs);
      for (int64_t m = 0; m < kM; ++m)
        acc0[m] = xsimd::fma(w0, V::load_unaligned(a.x + m * a.x_stride + k_pairs), acc0[m]);
    }
    for (int64_t m = 0; m < kM; ++m) {
      const float* xr = a.x + m * a.x_stride;
      float s = xsimd::hadd(acc0[m] + acc1[m]);
      for (int64_t i = k_vec; i < a.k; ++i) s += w[i] * xr[i];
      a.y[m * a.y_stride + j] = s + (a.bias ? a.bias[j] : 0.f);
    }
  }
}

// f(std::integral_constant<int64_t, n>()) when 1 <= n <= kMax -- a count as a template argument,
// so that the arrays it sizes live in registers; nothing for any other n (no rows or no columns:
// nothing to compute, and no body may read the rows it was not given).
template <int64_t kMax, class F>
void WithCount(int64_t n, F& f) {
  if constexpr (kMax >= 1) {
    if (n == kMax) return f(std::integral_constant<int64_t, kMax>());
    WithCount<kMax - 1>(n, f);
  }
}

template <class Arch>
void Rows(const GemvArgs& a, int64_t begin, int64_t end) {
  auto body = [&](auto m) { RowsOf<Arch, decltype(m)::value>(a, begin, end); };
  WithCount<kGemvMaxRows>(a.rows, body);
}

// The first `count` (< the vector's width) floats at p, zeros after: a row's last partial vector
// without reading past the row (masked loads where the instruction set has them).
template <class Arch>
inline xsimd::batch<float, Arch> LoadFirst(const float* p, int64_t count) {
  using V = xsimd::batch<float, Arch>;
#if defined(__AVX512F__)
  if constexpr (V::size == 16) return V(_mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << count) - 1u), p));
#endif
#if defined(__AVX2__)
  if constexpr (V::size == 8) {
    alignas(32) static constexpr int32_t kMask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    return V(_mm256_maskload_ps(p, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMask + 8 - count))));
  }
#endif
  alignas(64) float t[V::size] = {};
  std::copy(p, p + count, t);
  return V::load_aligned(t);
}

// Lane q of the result: the sum of acc[q]'s lanes, for all of the vector's width of accumulators
// at once. (xsimd 8's haddp for AVX-512 puts some sums in the wrong lanes.)
template <class Arch>
inline xsimd::batch<float, Arch> SumEach(const xsimd::batch<float, Arch>* acc) {
  using V = xsimd::batch<float, Arch>;
#if defined(__AVX512F__)
  if constexpr (V::size == 16) {
    // Each level adds halves of two vectors into one: 128-bit blocks twice (block q of d[i]
    // holds accumulator 4i + q), then pairs of lanes within blocks twice; lane 4q + s ends
    // with accumulator 4s + q, which the permute moves to lane 4s + q.
    __m512 c[8], d[4], e[2];
    for (int i = 0; i < 8; ++i)
      c[i] = _mm512_add_ps(_mm512_shuffle_f32x4(acc[2 * i], acc[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                           _mm512_shuffle_f32x4(acc[2 * i], acc[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    for (int i = 0; i < 4; ++i)
      d[i] = _mm512_add_ps(_mm512_shuffle_f32x4(c[2 * i], c[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                           _mm512_shuffle_f32x4(c[2 * i], c[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
    for (int i = 0; i < 2; ++i)
      e[i] = _mm512_add_ps(_mm512_shuffle_ps(d[2 * i], d[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                           _mm512_shuffle_ps(d[2 * i], d[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    const __m512 f = _mm512_add_ps(_mm512_shuffle_ps(e[0], e[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                   _mm512_shuffle_ps(e[0], e[1], _MM_SHUFFLE(3, 1, 3, 1)));
    alignas(64) static constexpr int32_t kLane[16] = {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15};
    return V(_mm512_permutexvar_ps(_mm512_load_si512(kLane), f));
  }
#endif
  if constexpr (V::size == 8) return xsimd::haddp(acc);
  alignas(64) float sums[V::size];
  for (size_t q = 0; q < V::size; ++q) sums[q] = xsimd::hadd(acc[q]);
  return V::load_aligned(sums);
}

// FewColumnRows for n weight rows: kGroup = kW / n input rows a step, accumulator r * n + j
// holding row r's dot product with weight row j (a partial last group re-reads its last row and
// drops those sums); SumEach folds all kW at once.
template <class Arch, int64_t kN>
void FewColumnRowsOf(const GemvArgs& a, int64_t begin, int64_t end) {
  using V = xsimd::batch<float, Arch>;
  constexpr int64_t kW = static_cast<int64_t>(V::size), kGroup = kW / kN;
  const int64_t k_vec = a.k - a.k % kW, tail = a.k - k_vec;
  for (int64_t m = begin; m < end; m += kGroup) {
    const float* x[kGroup];
    for (int64_t r = 0; r < kGroup; ++r) x[r] = a.x + std::min(m + r, end - 1) * a.x_stride;
    V acc[kW];
    for (int64_t q = 0; q < kW; ++q) acc[q] = V(0.f);
    auto step = [&](int64_t i, auto load) {
      V w[kN];
      for (int64_t j = 0; j < kN; ++j) w[j] = load(a.w + j * a.k + i);
      for (int64_t r = 0; r < kGroup; ++r) {
        const V xv = load(x[r] + i);
        for (int64_t j = 0; j < kN; ++j) acc[r * kN + j] = xsimd::fma(xv, w[j], acc[r * kN + j]);
      }
    };
    for (int64_t i = 0; i < k_vec; i += kW) step(i, [](const float* p) { return V::load_unaligned(p); });
    if (tail > 0) step(k_vec, [tail](const float* p) { return LoadFirst<Arch>(p, tail); });
    alignas(64) float sums[kW];
    SumEach<Arch>(acc).store_aligned(sums);
    for (int64_t r = 0; r < kGroup && m + r < end; ++r)
      for (int64_t j = 0; j < kN; ++j) a.y[(m + r) * a.y_stride + j] = sums[r * kN + j] + (a.bias ? a.bias[j] : 0.f);
  }
}

template <class Arch>
void FewColumnRows(const GemvArgs& a, int64_t begin, int64_t end) {
  auto body = [&](auto n) { FewColumnRowsOf<Arch, decltype(n)::value>(a, begin, end); };
  WithCount<kFewColumnsMax>(a.n, body);
}

// kInterleavedRows weight rows side by side, one vector of each per step dotted with every
// input row: eight sequential streams at once. Which of the two walks is faster is the CPU's:
// on an Intel Xeon (family 6 model 207, 2 threads, weights evicted) eight streams read
// 1 x 512 x 2048 at ~22 GB/s against ~14 GB/s for one; on a Zen 4 one stream was the faster
// (above). Both are candidates of the measured choice. A depth ends in a masked partial vector
// (never read past a row).
inline constexpr int64_t kInterleavedRows = 8;

// Weight rows [j, j + kJ) dotted with every input row. Each output is the same chain of
// operations whatever kJ is, so the rows after the last whole group of a thread's share (kJ = 1)
// round exactly as they would inside a group: the result does not depend on how the rows were
// split over the threads.
template <class Arch, int64_t kM, int64_t kJ>
void InterleavedGroup(const GemvArgs& a, int64_t j) {
  using V = xsimd::batch<float, Arch>;
  constexpr int64_t kW = static_cast<int64_t>(V::size);
  const int64_t k_vec = a.k - a.k % kW, tail = a.k - k_vec;
  V acc[kM][kJ];
  for (int64_t m = 0; m < kM; ++m)
    for (int64_t q = 0; q < kJ; ++q) acc[m][q] = V(0.f);
  auto step = [&](int64_t i, auto load) {
    V x[kM];
    for (int64_t m = 0; m < kM; ++m) x[m] = load(a.x + m * a.x_stride + i);
    for (int64_t q = 0; q < kJ; ++q) {
      const V w = load(a.w + (j + q) * a.k + i);
      for (int64_t m = 0; m < kM; ++m) acc[m][q] = xsimd::fma(w, x[m], acc[m][q]);
    }
  };
  for (int64_t i = 0; i < k_vec; i += kW) step(i, [](const float* p) { return V::load_unaligned(p); });
  if (tail > 0) step(k_vec, [tail](const float* p) { return LoadFirst<Arch>(p, tail); });
  for (int64_t m = 0; m < kM; ++m)
    for (int64_t q = 0; q < kJ; ++q)
      a.y[m * a.y_stride + j + q] = xsimd::hadd(acc[m][q]) + (a.bias ? a.bias[j + q] : 0.f);
}

// The input rows from `first` on, with their output rows.
inline GemvArgs InputRowsFrom(const GemvArgs& a, int64_t first) {
  GemvArgs rest = a;
  rest.x += first * a.x_stride;
  rest.y += first * a.y_stride;
  rest.rows -= first;
  return rest;
}

// Up to kRowsPerPass input rows: each group once. Their kM x 8 accumulators fill AVX-512's
// registers; more input rows would spill them on every step (8 rows against a 2048 x 512 weight,
// Intel Xeon family 6 model 207, 2 threads, weights evicted: 440-450 us), so from the fifth row
// on a group is walked twice, rows 0-3 first, then the rest while the group's weight rows are
// still in L1/L2 -- the weight still comes from memory once (310-320 us; MKL ~450).
inline constexpr int64_t kRowsPerPass = 4;

template <class Arch, int64_t kM>
void InterleavedOf(const GemvArgs& a, int64_t begin, int64_t end) {
  static_assert(kM <= 2 * kRowsPerPass, "two passes cover the rows");
  constexpr int64_t kFirst = std::min(kM, kRowsPerPass);
  auto group = [&](auto rows_in_group, int64_t j) {
    constexpr int64_t kJ = decltype(rows_in_group)::value;
    InterleavedGroup<Arch, kFirst, kJ>(a, j);
    if constexpr (kM > kFirst) InterleavedGroup<Arch, kM - kFirst, kJ>(InputRowsFrom(a, kFirst), j);
  };
  int64_t j = begin;
  for (; j + kInterleavedRows <= end; j += kInterleavedRows)
    group(std::integral_constant<int64_t, kInterleavedRows>(), j);
  for (; j < end; ++j) group(std::integral_constant<int64_t, 1>(), j);
}

template <class Arch>
void Interleaved(const GemvArgs& a, int64_t begin, int64_t end) {
  auto body = [&](auto m) { InterleavedOf<Arch, decltype(m)::value>(a, begin, end); };
  WithCount<kGemvMaxRows>(a.rows, body);
}

}  // namespace ge::cpu::gemv_detail
