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

// s[r][c .. c + 4W) = q[r] . keys c.. for R query rows (row stride `q_row`): the keys are columns
// of `kt` ([d][key], row stride `kt_row`), so each step broadcasts one query element against 4
// vectors of keys.
template <class V, int R>
inline void ScoreTile(const float* q, int64_t q_row, int64_t d_len, const float* kt, int64_t kt_row, float* s) {
  constexpr int kW = static_cast<int>(V::size);
  V acc[R][kTileVectors];
  for (int r = 0; r < R; ++r)
    for (int x = 0; x < kTileVectors; ++x) acc[r][x] = V(0.f);
  for (int64_t d = 0; d < d_len; ++d) {
    V keys[kTileVectors];
    for (int x = 0; x < kTileVectors; ++x) keys[x] = V::load_unaligned(kt + d * kt_row + x * kW);
    for (int r = 0; r < R; ++r) {
      const V qd(q[r * q_row + d]);
      for (int x = 0; x < kTileVectors; ++x) acc[r][x] = xsimd::fma(qd, keys[x], acc[r][x]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int x = 0; x < kTileVectors; ++x) acc[r][x].store_unaligned(s + r * kKeyBlock + x * kW);
}

// o[r][d0 .. d0 + NV W) = o * alpha[r] + sum over the block's keys c < cols of p[r][c] v[c]: one
// value row (NV vectors) per key against R rows of probabilities (row stride kKeyBlock). `o_row`:
// the row stride of o.
template <class V, int R, int NV>
inline void OutputTile(const float* p, int64_t cols, const float* v, int64_t v_row, float* o, int64_t o_row,
                       const float* alpha) {
  constexpr int kW = static_cast<int>(V::size);
  V acc[R][NV];
  for (int r = 0; r < R; ++r) {
    const V scale(alpha[r]);
    for (int x = 0; x < NV; ++x) acc[r][x] = V::load_unaligned(o + r * o_row + x * kW) * scale;
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
    for (int x = 0; x < NV; ++x) acc[r][x].store_unaligned(o + r * o_row + x * kW);
}

// OutputTile over a whole row of d_len floats, 4 vectors at a time, then 2, then 1.
template <class V, int R>
inline void OutputRows(const float* p, int64_t cols, const float* v, int64_t v_row, float* o, int64_t o_row,
                       int64_t d_len, const float* alpha) {
  constexpr int kW = static_cast<int>(V::size);
  int64_t d0 = 0;
  for (; d0 + 4 * kW <= d_len; d0 += 4 * kW) OutputTile<V, R, 4>(p, cols, v + d0, v_row, o + d0, o_row, alpha);
  for (; d0 + 2 * kW <= d_len; d0 += 2 * kW) OutputTile<V, R, 2>(p, cols, v + d0, v_row, o + d0, o_row, alpha);
  for (; d0 < d_len; d0 += kW) OutputTile<V, R, 1>(p, cols, v + d0, v_row, o + d0, o_row, alpha);
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

// One key block's step of a row's online softmax: its scores `s` (kKeyBlock, -inf past the ones
// it sees) become exp(s - the new row max), the row's max and sum move on, and the factor its
// earlier output is scaled by is returned. A row max that is still -inf (nothing seen yet)
// shifts by 0, so exp gives 0 and no NaN.
template <class V>
inline float OnlineSoftmaxStep(float* s, float& row_max, float& row_sum) {
  constexpr int kW = static_cast<int>(V::size);
  const float new_max = std::max(row_max, MaxOf<V>(s, kKeyBlock));
  const float shift = new_max == -std::numeric_limits<float>::infinity() ? 0.f : new_max;
  const float alpha = std::exp(row_max - shift);
  const V shift_v(shift);
  V sum(0.f);
  for (int64_t c = 0; c < kKeyBlock; c += kW) {
    const V p = xsimd::exp(V::load_unaligned(s + c) - shift_v);
    p.store_unaligned(s + c);
    sum += p;
  }
  row_sum = row_sum * alpha + xsimd::hadd(sum);
  row_max = new_max;
  return alpha;
}

// Query row i of (batch b, head h): its output, the unnormalized `o` over the row's softmax sum
// (zeros for a row that saw no key), and where a.lse is set its log-sum-exp (the probabilities
// were exp(s - row_max) / row_sum; 0 for a row that saw no key, as ATen's kernel saves).
template <class V>
inline void FinishRow(const FlashAttentionArgs& a, int64_t b, int64_t h, int64_t i, const float* o, float row_max,
                      float row_sum) {
  constexpr int kW = static_cast<int>(V::size);
  float* out = a.out + b * a.out_strides[0] + h * a.out_strides[1] + i * a.out_strides[2];
  const V inverse(row_sum == 0.f ? 0.f : 1.f / row_sum);
  for (int64_t d = 0; d < a.head_dim; d += kW) (V::load_unaligned(o + d) * inverse).store_unaligned(out + d);
  if (a.lse != nullptr)
    a.lse[b * a.lse_strides[0] + h * a.lse_strides[1] + i * a.lse_strides[2]] =
        row_sum == 0.f ? 0.f : row_max + std::log(row_sum);
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
          ScoreTile<V, decltype(tile)::value>(q_tile + r * d_len, d_len, d_len, keys.data() + c0 * d_len + c, kKeyBlock,
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
        alpha[r] = OnlineSoftmaxStep<V>(s, row_max[r], row_sum[r]);
      }
      const float* v_block = v + c0 * a.v_strides[2];
      ForRowTiles<kTileRows<V>>(rows, [&](int64_t r, auto tile) {
        constexpr int R = decltype(tile)::value;
        OutputRows<V, R>(s_tile + r * kKeyBlock, cols, v_block, a.v_strides[2], o_tile + r * d_len, d_len, d_len,
                         alpha + r);
      });
    }
    for (int64_t r = 0; r < rows; ++r) FinishRow<V>(a, b, h, r0 + r, o_tile + r * d_len, row_max[r], row_sum[r]);
  }
}

// s[r * kKeyBlock] = q[r] . key for R query rows (row stride d_len) and one key row: two
// accumulators per row over alternate vectors of d, so that R x 2 FMA chains overlap.
template <class V, int R>
inline void DotKeyRow(const float* q, int64_t d_len, const float* key, float* s) {
  constexpr int kW = static_cast<int>(V::size);
  V even[R], odd[R];
  for (int r = 0; r < R; ++r) even[r] = odd[r] = V(0.f);
  int64_t d = 0;
  for (; d + 2 * kW <= d_len; d += 2 * kW) {
    const V k0 = V::load_unaligned(key + d), k1 = V::load_unaligned(key + d + kW);
    for (int r = 0; r < R; ++r) {
      even[r] = xsimd::fma(V::load_unaligned(q + r * d_len + d), k0, even[r]);
      odd[r] = xsimd::fma(V::load_unaligned(q + r * d_len + d + kW), k1, odd[r]);
    }
  }
  if (d < d_len) {
    const V k0 = V::load_unaligned(key + d);
    for (int r = 0; r < R; ++r) even[r] = xsimd::fma(V::load_unaligned(q + r * d_len + d), k0, even[r]);
  }
  for (int r = 0; r < R; ++r) s[r * kKeyBlock] = xsimd::hadd(even[r] + odd[r]);
}

// Lane j: the sum of acc[j]'s lanes. xsimd's haddp does this for AVX2; for AVX-512 (xsimd 8.1)
// it returns the sums in shuffled lanes, so there each vector's halves are added and AVX2's
// haddp sums eight at a time.
template <class V>
inline V SumsOf(const V* acc) {
  return xsimd::haddp(acc);
}
#if defined(__AVX512F__) && defined(__AVX512DQ__)
template <>
inline xsimd::batch<float, xsimd::avx512f> SumsOf(const xsimd::batch<float, xsimd::avx512f>* acc) {
  using Half = xsimd::batch<float, xsimd::avx2>;
  Half halves[16];
  for (int j = 0; j < 16; ++j) {
    const __m512 x = acc[j];
    halves[j] = Half(_mm256_add_ps(_mm512_castps512_ps256(x), _mm512_extractf32x8_ps(x, 1)));
  }
  const __m256 low = xsimd::haddp(halves), high = xsimd::haddp(halves + 8);
  return _mm512_insertf32x8(_mm512_castps256_ps512(low), high, 1);
}
#endif

// s[r * kKeyBlock + c] = q[r] . k[c] for `rows` query rows (row stride d_len) and the keys c < cols
// (row stride k_row): kW keys at a time against one query row, one accumulator per key and
// their sums transposed into one vector (SumsOf); the keys left one at a time.
template <class V>
inline void KeyScores(const float* q, int64_t rows, int64_t d_len, const float* k, int64_t k_row, int64_t cols,
                      float* s) {
  constexpr int kW = static_cast<int>(V::size);
  int64_t c = 0;
  for (; c + kW <= cols; c += kW)
    for (int64_t r = 0; r < rows; ++r) {
      V acc[kW];
      for (int j = 0; j < kW; ++j) acc[j] = V(0.f);
      for (int64_t d = 0; d < d_len; d += kW) {
        const V qd = V::load_unaligned(q + r * d_len + d);
        for (int j = 0; j < kW; ++j) acc[j] = xsimd::fma(qd, V::load_unaligned(k + (c + j) * k_row + d), acc[j]);
      }
      SumsOf(acc).store_unaligned(s + r * kKeyBlock + c);
    }
  for (; c < cols; ++c)
    ForRowTiles<kTileRows<V>>(rows, [&](int64_t r, auto tile) {
      DotKeyRow<V, decltype(tile)::value>(q + r * d_len, d_len, k + c * k_row, s + r * kKeyBlock + c);
    });
}

// DecodeAttention's tasks [begin, end) (DecodeSplit says what a task is). Row r of a task's tiles
// is query row r % q_len of the group's query head r / q_len.
template <class Arch>
void Decode(const FlashAttentionArgs& a, const DecodeSplit& split, int64_t begin, int64_t end) {
  using V = xsimd::batch<float, Arch>;
  constexpr int kW = static_cast<int>(V::size);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const int64_t d_len = a.head_dim, group = a.q_heads / a.kv_heads, rows = group * a.q_len;
  // The thread's buffers, kept between runs (a run allocates nothing once they are large enough).
  thread_local std::vector<float> work;
  work.resize(std::max(work.size(), static_cast<size_t>(rows * (2 * d_len + kKeyBlock + 3))));
  float* const q_tile = work.data();            // the group's queries, scaled, [r][d]
  float* const o_tile = q_tile + rows * d_len;  // unnormalized outputs, [r][d]
  float* const s_tile = o_tile + rows * d_len;  // scores, then probabilities, [r][key]
  float* const row_max = s_tile + rows * kKeyBlock;
  float* const row_sum = row_max + rows;
  float* const alpha = row_sum + rows;
  const V scale(a.scale);
  for (int64_t task = begin; task < end; ++task) {
    const int64_t chunk = task % split.chunks, bkv = task / split.chunks;
    const int64_t kvh = bkv % a.kv_heads, b = bkv / a.kv_heads;
    auto head_of = [&](int64_t r) { return kvh * group + r / a.q_len; };
    for (int64_t r = 0; r < rows; ++r) {
      const float* q = a.q + b * a.q_strides[0] + head_of(r) * a.q_strides[1] + r % a.q_len * a.q_strides[2];
      for (int64_t d = 0; d < d_len; d += kW)
        (V::load_unaligned(q + d) * scale).store_unaligned(q_tile + r * d_len + d);
    }
    std::fill(o_tile, o_tile + rows * d_len, 0.f);
    std::fill(row_max, row_max + rows, -kInf);
    std::fill(row_sum, row_sum + rows, 0.f);
    const float* k = a.k + b * a.k_strides[0] + kvh * a.k_strides[1];
    const float* v = a.v + b * a.v_strides[0] + kvh * a.v_strides[1];
    // Causal (top-left): no row sees a key past the last query row.
    const int64_t seen = a.causal ? std::min(a.kv_len, a.q_len) : a.kv_len;
    const int64_t first = chunk * split.chunk_len, last = std::min(seen, first + split.chunk_len);
    for (int64_t c0 = first; c0 < last; c0 += kKeyBlock) {
      const int64_t cols = std::min(kKeyBlock, last - c0);
      KeyScores<V>(q_tile, rows, d_len, k + c0 * a.k_strides[2], a.k_strides[2], cols, s_tile);
      for (int64_t r = 0; r < rows; ++r) {
        float* s = s_tile + r * kKeyBlock;
        const int64_t i = r % a.q_len;
        if (a.mask != nullptr) {
          const float* m = a.mask + b * a.mask_strides[0] + head_of(r) * a.mask_strides[1] + i * a.mask_strides[2];
          for (int64_t c = 0; c < cols; ++c) s[c] += m[(c0 + c) * a.mask_strides[3]];
        }
        const int64_t visible = a.causal ? std::clamp<int64_t>(i - c0 + 1, 0, cols) : cols;
        std::fill(s + visible, s + kKeyBlock, -kInf);
        alpha[r] = OnlineSoftmaxStep<V>(s, row_max[r], row_sum[r]);
      }
      ForRowTiles<kTileRows<V>>(rows, [&](int64_t r, auto tile) {
        OutputRows<V, decltype(tile)::value>(s_tile + r * kKeyBlock, cols, v + c0 * a.v_strides[2], a.v_strides[2],
                                             o_tile + r * d_len, d_len, d_len, alpha + r);
      });
    }
    if (split.chunks > 1) {  // the chunk's state, merged by DecodeAttention
      float* state = split.partials + task * rows * (d_len + 2);
      for (int64_t r = 0; r < rows; ++r, state += d_len + 2) {
        state[0] = row_max[r];
        state[1] = row_sum[r];
        std::copy(o_tile + r * d_len, o_tile + (r + 1) * d_len, state + 2);
      }
      continue;
    }
    for (int64_t r = 0; r < rows; ++r)
      FinishRow<V>(a, b, head_of(r), r % a.q_len, o_tile + r * d_len, row_max[r], row_sum[r]);
  }
}

// dst[d][c] = rows[c][d] for the block's keys c < cols (row stride `row`), zeros for the keys
// after them up to kKeyBlock: the layout ScoreTile reads.
inline void TransposeKeyBlock(const float* rows, int64_t row, int64_t cols, int64_t d_len, float* dst) {
  for (int64_t d = 0; d < d_len; ++d) {
    float* out = dst + d * kKeyBlock;
    for (int64_t c = 0; c < cols; ++c) out[c] = rows[c * row + d];
    std::fill(out + cols, out + kKeyBlock, 0.f);
  }
}

// dst[c][r] = src[r][c] over a rows x cols corner of a kKeyBlock-wide tile.
inline void TransposeTile(const float* src, int64_t rows, int64_t cols, float* dst) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[c * kKeyBlock + r] = src[r * kKeyBlock + c];
}

inline void ZeroRows(float* x, int64_t rows, int64_t row, int64_t d_len) {
  for (int64_t r = 0; r < rows; ++r) std::fill(x + r * row, x + r * row + d_len, 0.f);
}

// The backward's pointers for one (batch, head): a [len, d] matrix and its row stride.
struct HeadRows {
  const float* data;
  int64_t row;
};
inline HeadRows RowsOf(const float* base, const int64_t* strides, int64_t b, int64_t h) {
  return {base + b * strides[0] + h * strides[1], strides[2]};
}

// One (batch, key/value head) task after another: the head's dK and dV and its query group's dQ
// accumulate in the gradients' own memory, zeroed first. Per key block (transposed once, with its
// values) and query head, each query block that sees a key of it: scores and dO V^T by ScoreTile,
// P and dS in the tile, then the three products by OutputRows.
template <class Arch>
void Backward(const FlashAttentionGradArgs& g, int64_t begin, int64_t end) {
  using V = xsimd::batch<float, Arch>;
  constexpr int kW = static_cast<int>(V::size);
  constexpr int kRows = kTileRows<V>;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  static_assert(kQueryBlock == kKeyBlock, "transposed tiles keep the row stride kKeyBlock");
  const FlashAttentionArgs& a = g.forward;
  const int64_t d_len = a.head_dim, group = a.q_heads / a.kv_heads, tile = kKeyBlock * kKeyBlock;
  thread_local std::vector<float> work;
  work.resize(
      std::max(work.size(), static_cast<size_t>(2 * d_len * kKeyBlock + 4 * tile + kKeyBlock + 2 * group * a.q_len)));
  float* const kt = work.data();                // the key block, [d][key]
  float* const vt = kt + d_len * kKeyBlock;     // its values, [d][key]
  float* const probs = vt + d_len * kKeyBlock;  // [query][key]
  float* const dscores = probs + tile;          // dO V^T, then dS, [query][key]
  float* const probs_t = dscores + tile;        // [key][query]
  float* const dscores_t = probs_t + tile;      // [key][query]
  float* const ones = dscores_t + tile;         // OutputRows' alpha: accumulate as is
  float* const row_dot = ones + kKeyBlock;      // rowsum(dO * O) per query row of the group
  float* const row_lse = row_dot + group * a.q_len;
  std::fill(ones, ones + kKeyBlock, 1.f);
  const V scale(a.scale);
  for (int64_t task = begin; task < end; ++task) {
    const int64_t b = task / a.kv_heads, kvh = task % a.kv_heads;
    const HeadRows k = RowsOf(a.k, a.k_strides, b, kvh), v = RowsOf(a.v, a.v_strides, b, kvh);
    float* const gk = g.grad_k + b * g.grad_k_strides[0] + kvh * g.grad_k_strides[1];
    float* const gv = g.grad_v + b * g.grad_v_strides[0] + kvh * g.grad_v_strides[1];
    ZeroRows(gk, a.kv_len, g.grad_k_strides[2], d_len);
    ZeroRows(gv, a.kv_len, g.grad_v_strides[2], d_len);
    for (int64_t gh = 0; gh < group; ++gh) {
      const int64_t h = kvh * group + gh;
      ZeroRows(g.grad_q + b * g.grad_q_strides[0] + h * g.grad_q_strides[1], a.q_len, g.grad_q_strides[2], d_len);
      const HeadRows o = RowsOf(a.out, a.out_strides, b, h), dout = RowsOf(g.grad_out, g.grad_out_strides, b, h);
      const float* lse = a.lse + b * a.lse_strides[0] + h * a.lse_strides[1];
      for (int64_t i = 0; i < a.q_len; ++i) {
        V dot(0.f);
        for (int64_t d = 0; d < d_len; d += kW)
          dot = xsimd::fma(V::load_unaligned(dout.data + i * dout.row + d), V::load_unaligned(o.data + i * o.row + d),
                           dot);
        row_dot[gh * a.q_len + i] = xsimd::hadd(dot);
        const float saved = lse[i * a.lse_strides[2]];
        row_lse[gh * a.q_len + i] = saved == -kInf ? 0.f : saved;  // a row that saw no key (unfused forward)
      }
    }
    for (int64_t c0 = 0; c0 < a.kv_len; c0 += kKeyBlock) {
      const int64_t cols = std::min(kKeyBlock, a.kv_len - c0);
      TransposeKeyBlock(k.data + c0 * k.row, k.row, cols, d_len, kt);
      TransposeKeyBlock(v.data + c0 * v.row, v.row, cols, d_len, vt);
      for (int64_t gh = 0; gh < group; ++gh) {
        const int64_t h = kvh * group + gh;
        const HeadRows q = RowsOf(a.q, a.q_strides, b, h), dout = RowsOf(g.grad_out, g.grad_out_strides, b, h);
        float* const gq = g.grad_q + b * g.grad_q_strides[0] + h * g.grad_q_strides[1];
        // A causal key block is seen from the query block holding row c0 on.
        for (int64_t r0 = a.causal ? c0 / kQueryBlock * kQueryBlock : 0; r0 < a.q_len; r0 += kQueryBlock) {
          const int64_t rows = std::min(kQueryBlock, a.q_len - r0);
          ForRowTiles<kRows>(rows, [&](int64_t r, auto t) {
            constexpr int R = decltype(t)::value;
            for (int64_t c = 0; c < kKeyBlock; c += kTileVectors * kW) {
              ScoreTile<V, R>(q.data + (r0 + r) * q.row, q.row, d_len, kt + c, kKeyBlock, probs + r * kKeyBlock + c);
              ScoreTile<V, R>(dout.data + (r0 + r) * dout.row, dout.row, d_len, vt + c, kKeyBlock,
                              dscores + r * kKeyBlock + c);
            }
          });
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t i = r0 + r;
            float* s = probs + r * kKeyBlock;
            for (int64_t c = 0; c < kKeyBlock; c += kW) (V::load_unaligned(s + c) * scale).store_unaligned(s + c);
            if (a.mask != nullptr) {
              const float* m = a.mask + b * a.mask_strides[0] + h * a.mask_strides[1] + i * a.mask_strides[2];
              for (int64_t c = 0; c < cols; ++c) s[c] += m[(c0 + c) * a.mask_strides[3]];
            }
            const int64_t visible = a.causal ? std::clamp<int64_t>(i - c0 + 1, 0, cols) : cols;
            std::fill(s + visible, s + kKeyBlock, -kInf);
            const V lse_v(row_lse[gh * a.q_len + i]), dot_v(row_dot[gh * a.q_len + i]);
            float* ds = dscores + r * kKeyBlock;
            for (int64_t c = 0; c < kKeyBlock; c += kW) {
              const V p = xsimd::exp(V::load_unaligned(s + c) - lse_v);
              p.store_unaligned(s + c);
              (p * (V::load_unaligned(ds + c) - dot_v) * scale).store_unaligned(ds + c);
            }
          }
          TransposeTile(probs, rows, cols, probs_t);
          TransposeTile(dscores, rows, cols, dscores_t);
          ForRowTiles<kRows>(cols, [&](int64_t c, auto t) {  // dV += P^T dO, dK += dS^T Q
            constexpr int R = decltype(t)::value;
            OutputRows<V, R>(probs_t + c * kKeyBlock, rows, dout.data + r0 * dout.row, dout.row,
                             gv + (c0 + c) * g.grad_v_strides[2], g.grad_v_strides[2], d_len, ones);
            OutputRows<V, R>(dscores_t + c * kKeyBlock, rows, q.data + r0 * q.row, q.row,
                             gk + (c0 + c) * g.grad_k_strides[2], g.grad_k_strides[2], d_len, ones);
          });
          ForRowTiles<kRows>(rows, [&](int64_t r, auto t) {  // dQ += dS K
            OutputRows<V, decltype(t)::value>(dscores + r * kKeyBlock, cols, k.data + c0 * k.row, k.row,
                                              gq + (r0 + r) * g.grad_q_strides[2], g.grad_q_strides[2], d_len, ones);
          });
        }
      }
    }
  }
}

}  // namespace ge::cpu::flash_detail
