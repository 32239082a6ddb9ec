// The body of FlashAttention for one xsimd architecture; included by one translation unit per
// instruction set (flash_attention_avx512.cc, flash_attention_avx2.cc), each compiled for it.
#pragma once

#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "devices/cpu/kernels/flash_attention.h"

namespace ge::cpu::flash_detail {

// Query rows per register tile: 4 rows x 4 vectors of accumulators fit AVX-512's 32 registers
// beside the operands, 2 x 4 AVX2's 16.
template <class V>
constexpr int kTileRows = V::size >= 16 ? 4 : 2;
constexpr int kTileVectors = 4;

// f(r, R) over rows [0, rows) in tiles of G rows, then one tile of the 1-3 left.
template <int G, class F>
void ForRowTiles(int64_t rows, F&& f) {
  int64_t r = 0;
  for (; r + G <= rows; r += G) f(r, std::integral_constant<int, G>{});
  switch (rows - r) {
    case 3: f(r, std::integral_constant<int, 3>{}); break;
    case 2: f(r, std::integral_constant<int, 2>{}); break;
    case 1: f(r, std::integral_constant<int, 1>{}); break;
    default: break;
  }
}

// s[r][c .. c + 4W) = q[r] . keys c.. for R query rows: the keys are columns of `kt` ([d][key],
// row stride `kt_row`), so each step broadcasts one query element against 4 vectors of keys.
template <class V, int R>
inline void ScoreTile(const float* q, int64_t d_len, const float* kt, int64_t kt_row, float* s) {
  constexpr int kW = static_cast<int>(V::size);
  V acc[R][kTileVectors];
  for (int r = 0; r < R; ++r)
    for (int x = 0; x < kTileVectors; ++x) acc[r][x] = V(0.f);
  for (int64_t d = 0; d < d_len; ++d) {
    V keys[kTileVectors];
    for (int x = 0; x < kTileVectors; ++x) keys[x] = V::load_unaligned(kt + d * kt_row + x * kW);
    for (int r = 0; r < R; ++r) {
      const V qd(q[r * d_len + d]);
      for (int x = 0; x < kTileVectors; ++x) acc[r][x] = xsimd::fma(qd, keys[x], acc[r][x]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int x = 0; x < kTileVectors; ++x) acc[r][x].store_unaligned(s + r * kKeyBlock + x * kW);
}

// o[r][d0 .. d0 + NV W) = o * alpha[r] + sum over the block's keys c < cols of p[r][c] v[c]: one
// value row (NV vectors) per key against R rows of probabilities.
template <class V, int R, int NV>
inline void OutputTile(const float* p, int64_t cols, const float* v, int64_t v_row, float* o, int64_t d_len,
                       const float* alpha) {
  constexpr int kW = static_cast<int>(V::size);
  V acc[R][NV];
  for (int r = 0; r < R; ++r) {
    const V scale(alpha[r]);
    for (int x = 0; x < NV; ++x) acc[r][x] = V::load_unaligned(o + r * d_len + x * kW) * scale;
  }
  for (int64_t c = 0; c < cols; ++c) {
    V values[NV];
    for (int x = 0; x < NV; ++x) values[x] = V::load_unaligned(v + c * v_row + x * kW);
    for (int r = 0; r < R; ++r) {
      const V pc(p[r * kKeyBlock + c]);
      for (int x = 0; x < NV; ++x) acc[r][x] = xsimd::fma(pc, values[x], acc[r][x]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int x = 0; x < NV; ++x) acc[r][x].store_unaligned(o + r * d_len + x * kW);
}

template <class V>
float MaxOf(const float* x, int64_t n) {
  constexpr int kW = static_cast<int>(V::size);
  V m(-std::numeric_limits<float>::infinity());
  for (int64_t c = 0; c < n; c += kW) m = xsimd::max(m, V::load_unaligned(x + c));
  alignas(64) float lanes[kW];
  m.store_aligned(lanes);
  return *std::max_element(lanes, lanes + kW);
}

// One (batch, query head, query block) task after another. The keys of a (batch, head) are
// transposed once, block by block ([block][d][key]: one contiguous tile per key block, padded
// with zero keys -- a [d][all keys] layout put the rows a tile reads a power of two apart, into
// a few L1 sets), and reused by the following tasks of the same head: the tasks of a thread's
// range come in head order.
template <class Arch>
void Blocks(const FlashAttentionArgs& a, int64_t begin, int64_t end) {
  using V = xsimd::batch<float, Arch>;
  constexpr int kW = static_cast<int>(V::size);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const int64_t d_len = a.head_dim, q_blocks = (a.q_len + kQueryBlock - 1) / kQueryBlock;
  const int64_t group = a.q_heads / a.kv_heads;
  const int64_t kv_pad = (a.kv_len + kKeyBlock - 1) / kKeyBlock * kKeyBlock;
  // The thread's buffers, kept between runs (a run allocates nothing once they are large enough).
  thread_local std::vector<float> keys, work;
  keys.resize(std::max(keys.size(), static_cast<size_t>(d_len * kv_pad)));
  work.resize(
      std::max(work.size(), static_cast<size_t>(2 * kQueryBlock * d_len + kQueryBlock * kKeyBlock + 3 * kQueryBlock)));
  float* const q_tile = work.data();                   // the block's queries, scaled, [r][d]
  float* const o_tile = q_tile + kQueryBlock * d_len;  // its unnormalized outputs, [r][d]
  float* const s_tile = o_tile + kQueryBlock * d_len;  // scores, then probabilities, [r][key]
  float* const row_max = s_tile + kQueryBlock * kKeyBlock;
  float* const row_sum = row_max + kQueryBlock;
  float* const alpha = row_sum + kQueryBlock;
  int64_t keys_of = -1;  // the (batch, kv head) `keys` holds
  for (int64_t task = begin; task < end; ++task) {
    const int64_t qb = task % q_blocks, bh = task / q_blocks, h = bh % a.q_heads, b = bh / a.q_heads;
    const int64_t kvh = h / group, r0 = qb * kQueryBlock, rows = std::min(kQueryBlock, a.q_len - r0);
    const float* v = a.v + b * a.v_strides[0] + kvh * a.v_strides[1];
    if (keys_of != b * a.kv_heads + kvh) {
      keys_of = b * a.kv_heads + kvh;
      const float* k = a.k + b * a.k_strides[0] + kvh * a.k_strides[1];
      for (int64_t c = a.kv_len; c < kv_pad; ++c)  // the last block's missing keys: zeros
        for (int64_t d = 0; d < d_len; ++d)
          keys[static_cast<size_t>(c / kKeyBlock * d_len * kKeyBlock + d * kKeyBlock + c % kKeyBlock)] = 0.f;
      for (int64_t c = 0; c < a.kv_len; ++c) {
        float* tile = keys.data() + c / kKeyBlock * d_len * kKeyBlock + c % kKeyBlock;
        for (int64_t d = 0; d < d_len; ++d) tile[d * kKeyBlock] = k[c * a.k_strides[2] + d];
      }
    }
    const float* q = a.q + b * a.q_strides[0] + h * a.q_strides[1] + r0 * a.q_strides[2];
    const V scale(a.scale);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t d = 0; d < d_len; d += kW)
        (V::load_unaligned(q + r * a.q_strides[2] + d) * scale).store_unaligned(q_tile + r * d_len + d);
    std::fill(o_tile, o_tile + rows * d_len, 0.f);
    std::fill(row_max, row_max + rows, -kInf);
    std::fill(row_sum, row_sum + rows, 0.f);
    // A causal query block sees keys up to its last row: the key blocks above its diagonal are skipped.
    const int64_t seen = a.causal ? std::min(a.kv_len, r0 + rows) : a.kv_len;
    for (int64_t c0 = 0; c0 < seen; c0 += kKeyBlock) {
      const int64_t cols = std::min(kKeyBlock, seen - c0);
      ForRowTiles<kTileRows<V>>(rows, [&](int64_t r, auto tile) {
        for (int64_t c = 0; c < kKeyBlock; c += kTileVectors * kW)
          ScoreTile<V, decltype(tile)::value>(q_tile + r * d_len, d_len, keys.data() + c0 * d_len + c, kKeyBlock,
                                              s_tile + r * kKeyBlock + c);
      });
      for (int64_t r = 0; r < rows; ++r) {
        float* s = s_tile + r * kKeyBlock;
        const int64_t i = r0 + r;
        if (a.mask != nullptr) {
          const float* m = a.mask + b * a.mask_strides[0] + h * a.mask_strides[1] + i * a.mask_strides[2];
          for (int64_t c = 0; c < cols; ++c) s[c] += m[(c0 + c) * a.mask_strides[3]];
        }
        const int64_t visible = a.causal ? std::clamp<int64_t>(i - c0 + 1, 0, cols) : cols;
        std::fill(s + visible, s + kKeyBlock, -kInf);
        // Online softmax: a row max that is still -inf (nothing seen yet) shifts by 0, so exp
        // gives 0 and no NaN.
        const float new_max = std::max(row_max[r], MaxOf<V>(s, kKeyBlock));
        const float shift = new_max == -kInf ? 0.f : new_max;
        alpha[r] = std::exp(row_max[r] - shift);
        const V shift_v(shift);
        V sum(0.f);
        for (int64_t c = 0; c < kKeyBlock; c += kW) {
          const V p = xsimd::exp(V::load_unaligned(s + c) - shift_v);
          p.store_unaligned(s + c);
          sum += p;
        }
        row_sum[r] = row_sum[r] * alpha[r] + xsimd::hadd(sum);
        row_max[r] = new_max;
      }
      const float* v_block = v + c0 * a.v_strides[2];
      ForRowTiles<kTileRows<V>>(rows, [&](int64_t r, auto tile) {
        constexpr int R = decltype(tile)::value;
        const float* p = s_tile + r * kKeyBlock;
        float* o = o_tile + r * d_len;
        int64_t d0 = 0;
        for (; d0 + 4 * kW <= d_len; d0 += 4 * kW)
          OutputTile<V, R, 4>(p, cols, v_block + d0, a.v_strides[2], o + d0, d_len, alpha + r);
        for (; d0 + 2 * kW <= d_len; d0 += 2 * kW)
          OutputTile<V, R, 2>(p, cols, v_block + d0, a.v_strides[2], o + d0, d_len, alpha + r);
        for (; d0 < d_len; d0 += kW)
          OutputTile<V, R, 1>(p, cols, v_block + d0, a.v_strides[2], o + d0, d_len, alpha + r);
      });
    }
    float* out = a.out + b * a.out_strides[0] + h * a.out_strides[1] + r0 * a.out_strides[2];
    for (int64_t r = 0; r < rows; ++r) {
      const V inverse(row_sum[r] == 0.f ? 0.f : 1.f / row_sum[r]);  // a query that saw no key: zeros
      for (int64_t d = 0; d < d_len; d += kW)
        (V::load_unaligned(o_tile + r * d_len + d) * inverse).store_unaligned(out + r * a.out_strides[2] + d);
    }
    if (a.lse != nullptr) {  // the probabilities were exp(s - row_max) / row_sum
      float* lse = a.lse + b * a.lse_strides[0] + h * a.lse_strides[1] + r0 * a.lse_strides[2];
      for (int64_t r = 0; r < rows; ++r)  // a row that saw no key: 0, as ATen's kernel saves
        lse[r * a.lse_strides[2]] = row_sum[r] == 0.f ? 0.f : row_max[r] + std::log(row_sum[r]);
    }
  }
}

}  // namespace ge::cpu::flash_detail
