// Attention over float32 [batch, heads, length, head_dim] without materializing the scores:
// blocks of 64 queries against blocks of 64 keys, the scores of a block pair computed into L1,
// softmax'd online (running row max and sum), and multiplied into the block's output -- the
// flash-attention scheme, with register-blocked xsimd products. ATen's CPU kernel (what eager
// SDPA runs) takes a whole row of keys per block, so its causal attention computes and masks
// the upper half of the scores it then throws away; here a causal key block that lies above a
// query block's diagonal is skipped. One candidate of FusedAttention's measured choice
// (kernel_choice.h): ATen's kernel is the other.
#pragma once

#include <cstdint>

namespace ge::cpu {

struct FlashAttentionArgs {
  const float* q = nullptr;  // [batch, q_heads, q_len, head_dim]: element strides below, last dim contiguous
  const float* k = nullptr;  // [batch, kv_heads, kv_len, head_dim]
  const float* v = nullptr;  // [batch, kv_heads, kv_len, head_dim]
  float* out = nullptr;      // [batch, q_heads, q_len, head_dim]
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, head_dim = 0;
  int64_t q_strides[3] = {0, 0, 0}, k_strides[3] = {0, 0, 0}, v_strides[3] = {0, 0, 0};  // batch, head, row
  int64_t out_strides[3] = {0, 0, 0};
  // Added to the scores, [batch, q_heads, q_len, kv_len] by element strides (0 where it
  // broadcasts); null for none.
  const float* mask = nullptr;
  int64_t mask_strides[4] = {0, 0, 0, 0};
  float scale = 1.f;
  bool causal = false;  // key j is seen by query i only where j <= i (torch's top-left alignment)
  // Each query row's log-sum-exp of its scaled, masked scores [batch, q_heads, q_len] by element
  // strides (batch, head, row); 0 for a row that sees no key (ATen's flash kernel's value: a
  // backward's exp(score - lse) is then 0, where -inf would give NaN); null for none.
  float* lse = nullptr;
  int64_t lse_strides[3] = {0, 0, 0};
};

// Whether this CPU has a vector body and the head size suits it (a multiple of 16, at most 256).
bool FlashAttentionApplies(int64_t head_dim);

// out = softmax(q k^T * scale + mask) v per (batch, query head), key/value head
// h / (q_heads / kv_heads); a query that sees no key (all masked) gets zeros, as ATen's kernel
// gives. Split over the intra-op threads by (batch, head, query block); each thread keeps its
// buffers between runs (the transposed keys of one head: head_dim x kv_len floats, and a block's
// tiles), so a run allocates nothing once they have grown to its sizes.
void FlashAttention(const FlashAttentionArgs& a);

// Attention for a few query rows per key/value head -- a decode step (one query per head, or a
// few: speculative decoding) -- where the blocked kernel reads each key/value head once per query
// head and transposes its keys first (on an Intel Xeon, 32 query heads over 8 key/value heads of
// 2048 x 128: blocked 1.5 ms, ATen's kernel 1.0, this one 0.55). Each task is one (batch,
// key/value head) and a range of its keys, with every query row of the head's query group as a
// row of one score tile: each key and value row is read once, in its own layout (a score is a dot
// product of two rows). When batch x key/value heads leave threads idle the keys are split into
// chunks (flash decoding), each chunk's softmax state (row max, row sum, unnormalized output)
// merged after. Same results and log-sum-exp as FlashAttention. Applies where FlashAttention does
// and a group's query rows (q_heads / kv_heads x q_len) are at most kDecodeMaxRows.
// `key_chunks`: 0 splits by the intra-op threads, else into that many chunks (tests).
inline constexpr int64_t kDecodeMaxRows = 64;
bool DecodeAttentionApplies(const FlashAttentionArgs& shape);
void DecodeAttention(const FlashAttentionArgs& a, int64_t key_chunks = 0);

// The backward's operands: the forward's (q, k, v, mask, scale, causal; `out` is the forward's
// output and `lse` its saved log-sum-exp, both read) and the gradients, each last dim contiguous.
struct FlashAttentionGradArgs {
  FlashAttentionArgs forward;
  const float* grad_out = nullptr;  // like out
  float* grad_q = nullptr;          // like q
  float* grad_k = nullptr;          // like k
  float* grad_v = nullptr;          // like v
  int64_t grad_out_strides[3] = {0, 0, 0}, grad_q_strides[3] = {0, 0, 0};
  int64_t grad_k_strides[3] = {0, 0, 0}, grad_v_strides[3] = {0, 0, 0};
};

// Attention's gradients from the forward's output and log-sum-exp, the probabilities recomputed
// block by block (64 queries x 64 keys in L1) and never materialized: P = exp(q k^T scale + mask
// - lse), dV = P^T dO, dS = P (dO V^T - rowsum(dO O)) scale, dQ = dS K, dK = dS^T Q. A causal key
// block above a query block's diagonal is skipped. A row whose log-sum-exp is 0 or -inf and that
// sees no key has zero gradients. Split over the intra-op threads by (batch, key/value head): a
// task owns that head's dK and dV and its group's dQ, so no two threads write the same row.
void FlashAttentionBackward(const FlashAttentionGradArgs& a);

namespace flash_detail {  // the bodies FlashAttention picks from, over tasks [begin, end)
void BlocksAvx2(const FlashAttentionArgs& a, int64_t begin, int64_t end);    // CPUs with AVX2 and FMA only
void BlocksAvx512(const FlashAttentionArgs& a, int64_t begin, int64_t end);  // CPUs with AVX-512F only
void BackwardAvx2(const FlashAttentionGradArgs& a, int64_t begin, int64_t end);
void BackwardAvx512(const FlashAttentionGradArgs& a, int64_t begin, int64_t end);
// DecodeAttention's split: tasks are (batch, key/value head, chunk) in that order, chunks of
// chunk_len keys (a multiple of kKeyBlock); with more than one chunk each task leaves its rows'
// state in `partials` ([task][row][max, sum, head_dim outputs]) instead of writing the output.
struct DecodeSplit {
  int64_t chunks = 1, chunk_len = 0;
  float* partials = nullptr;
};
void DecodeAvx2(const FlashAttentionArgs& a, const DecodeSplit& split, int64_t begin, int64_t end);
void DecodeAvx512(const FlashAttentionArgs& a, const DecodeSplit& split, int64_t begin, int64_t end);
inline constexpr int64_t kQueryBlock = 64;
inline constexpr int64_t kKeyBlock = 64;
}  // namespace flash_detail

}  // namespace ge::cpu
