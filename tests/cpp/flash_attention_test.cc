// The blocked attention kernel (flash_attention.h) against attention computed in float64 by
// ATen's products and softmax: each instruction set's body (the AVX2 one too, on a CPU that also
// has AVX-512), grouped-query heads, causal with fewer queries than keys, query and key counts
// that end in partial blocks and tiles, head sizes from one to several vectors, masks broadcast
// along any dim, strided (transposed) inputs, and queries that see no key; each row's
// log-sum-exp (training's FusedAttentionWithLse) against the float64 one, 0 where a row sees no
// key (as ATen's flash kernel). The backward (FusedAttentionGrad's blocked kernel) against float64
// gradients over the same kinds of cases.
#include "devices/cpu/kernels/flash_attention.h"

#include <gtest/gtest.h>

#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/full.h>
#include <ATen/ops/logsumexp.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace ge::cpu {
namespace {

// The bodies this CPU can run, by instruction set.
template <class Body>
std::vector<std::pair<std::string, Body>> BodiesThisCpuRuns(Body avx2, Body avx512) {
  std::vector<std::pair<std::string, Body>> bodies;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) bodies.emplace_back("avx2", avx2);
  if (__builtin_cpu_supports("avx512f")) bodies.emplace_back("avx512", avx512);
  return bodies;
}

auto Bodies() { return BodiesThisCpuRuns(flash_detail::BlocksAvx2, flash_detail::BlocksAvx512); }

struct Case {
  int64_t batch, q_heads, kv_heads, q_len, kv_len, head_dim;
  bool causal;
  std::vector<int64_t> mask_shape;  // empty: no mask
};

// q k^T * scale + mask in float64, causal positions -inf, key heads repeated for their query heads.
at::Tensor ReferenceScores(const at::Tensor& q, const at::Tensor& k, const at::Tensor& mask, double scale,
                           bool causal) {
  const at::Tensor kr = k.to(at::kDouble).repeat_interleave(q.size(1) / k.size(1), 1);
  at::Tensor scores = at::matmul(q.to(at::kDouble), kr.transpose(-1, -2)).mul(scale);
  if (mask.defined()) scores = scores.add(mask.to(at::kDouble));
  if (causal) {
    const at::Tensor above = at::ones({q.size(2), k.size(2)}, at::kBool).triu(1);
    scores = scores.masked_fill(above, -std::numeric_limits<double>::infinity());
  }
  return scores;
}

// softmax(q k^T * scale + mask) v in float64, key/value heads repeated for their query heads; a
// row that sees no key is zeros.
at::Tensor Reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                     double scale, bool causal) {
  const at::Tensor vr = v.to(at::kDouble).repeat_interleave(q.size(1) / k.size(1), 1);
  at::Tensor p = at::softmax(ReferenceScores(q, k, mask, scale, causal), -1)
                     .nan_to_num(0.0);  // (a row of -inf gives NaN, ATen's kernel zeros)
  return at::matmul(p, vr).to(at::kFloat);
}

// The largest difference from `expected`, an infinity where both have it counting as none.
double MaxError(const at::Tensor& got, const at::Tensor& expected) {
  const at::Tensor same_infinity = got.isinf().logical_and(got.eq(expected));
  return got.sub(expected).masked_fill(same_infinity, 0.0).abs().max().item<double>();
}

FlashAttentionArgs ArgsOf(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                          const at::Tensor& out, float scale, bool causal) {
  FlashAttentionArgs a;
  a.q = q.const_data_ptr<float>();
  a.k = k.const_data_ptr<float>();
  a.v = v.const_data_ptr<float>();
  a.out = out.data_ptr<float>();
  a.batch = q.size(0);
  a.q_heads = q.size(1);
  a.kv_heads = k.size(1);
  a.q_len = q.size(2);
  a.kv_len = k.size(2);
  a.head_dim = q.size(3);
  for (int d = 0; d < 3; ++d) {
    a.q_strides[d] = q.stride(d);
    a.k_strides[d] = k.stride(d);
    a.v_strides[d] = v.stride(d);
    a.out_strides[d] = out.stride(d);
  }
  if (mask.defined()) {
    const at::Tensor full = mask.expand({q.size(0), q.size(1), q.size(2), k.size(2)});
    a.mask = full.const_data_ptr<float>();
    for (int d = 0; d < 4; ++d) a.mask_strides[d] = full.stride(d);
  }
  a.scale = scale;
  a.causal = causal;
  return a;
}

TEST(FlashAttentionTest, EveryBodyMatchesFloat64Attention) {
  const std::vector<Case> cases = {
      {2, 4, 4, 64, 64, 16, false, {}},              // one block, one vector per row
      {1, 8, 2, 130, 130, 64, true, {}},             // grouped heads, causal, partial blocks and tiles
      {2, 2, 2, 37, 200, 32, true, {}},              // fewer queries than keys: top-left causal
      {1, 4, 1, 1, 75, 128, false, {1, 1, 1, 75}},   // a decode step with a padding mask
      {2, 3, 3, 67, 67, 48, false, {2, 1, 67, 67}},  // three vectors per row; mask per batch
      {1, 2, 2, 70, 129, 32, false, {1, 2, 1, 129}},
  };
  const float scale = 0.3f;
  for (const Case& c : cases) {
    // q read through a transpose ([B, L, H, E] stored), as attention's head split leaves it.
    const at::Tensor q = at::randn({c.batch, c.q_len, c.q_heads, c.head_dim}).transpose(1, 2);
    const at::Tensor k = at::randn({c.batch, c.kv_heads, c.kv_len, c.head_dim});
    const at::Tensor v = at::randn({c.batch, c.kv_heads, c.kv_len, c.head_dim});
    at::Tensor mask;
    if (!c.mask_shape.empty()) {
      mask = at::randn(c.mask_shape);
      mask.select(-1, 0).fill_(-std::numeric_limits<float>::infinity());                          // -inf entries
      if (c.mask_shape[2] > 1) mask.select(2, 1).fill_(-std::numeric_limits<float>::infinity());  // a row sees none
    }
    const at::Tensor expected = Reference(q, k, v, mask, scale, c.causal);
    // (ATen's flash kernel saves 0 for a row that sees no key.)
    const at::Tensor lse_or_inf = at::logsumexp(ReferenceScores(q, k, mask, scale, c.causal), {-1});
    const at::Tensor expected_lse = lse_or_inf.masked_fill(lse_or_inf.isneginf(), 0.0);
    for (const auto& [name, body] : Bodies()) {
      const at::Tensor out = at::full(expected.sizes(), std::nanf(""));
      FlashAttentionArgs a = ArgsOf(q, k, v, mask, out, scale, c.causal);
      // The log-sum-exps through a transposed [B, L, H] layout, by strides.
      const at::Tensor lse = at::full({c.batch, c.q_len, c.q_heads}, std::nanf("")).transpose(1, 2);
      a.lse = lse.data_ptr<float>();
      for (int d = 0; d < 3; ++d) a.lse_strides[d] = lse.stride(d);
      const int64_t q_blocks = (c.q_len + flash_detail::kQueryBlock - 1) / flash_detail::kQueryBlock;
      body(a, 0, c.batch * c.q_heads * q_blocks);
      const std::string where = name + " q_len " + std::to_string(c.q_len) + " kv_len " + std::to_string(c.kv_len);
      EXPECT_LT(out.sub(expected).abs().max().item<float>(), 2e-5) << where << " e " << c.head_dim;
      EXPECT_LT(MaxError(lse.to(at::kDouble), expected_lse), 2e-5) << where << " (log-sum-exp)";
    }
  }
}

auto DecodeBodies() { return BodiesThisCpuRuns(flash_detail::DecodeAvx2, flash_detail::DecodeAvx512); }

// The decode kernel (few query rows per key/value head) against float64 attention: each body on
// whole key ranges, and the dispatched kernel with its keys split into chunks whose softmax states
// are merged (2, 3 and 7 chunks: uneven, some empty of seen keys under a causal mask).
TEST(FlashAttentionTest, EveryDecodeBodyAndKeySplitMatchesFloat64Attention) {
  if (!DecodeAttentionApplies(ArgsOf(at::zeros({1, 1, 1, 16}), at::zeros({1, 1, 1, 16}), at::zeros({1, 1, 1, 16}), {},
                                     at::zeros({1, 1, 1, 16}), 1.f, false)))
    GTEST_SKIP() << "no AVX2 or AVX-512 on this CPU";
  const std::vector<Case> cases = {
      {1, 32, 8, 1, 300, 128, false, {}},             // a grouped-query decode step; partial key blocks
      {2, 4, 4, 1, 75, 64, false, {2, 1, 1, 75}},     // one query per head; a padding mask per batch
      {1, 8, 2, 4, 200, 32, true, {}},                // four queries (speculative decoding), top-left causal
      {2, 6, 2, 2, 17, 48, false, {1, 6, 2, 17}},     // fewer keys than a vector; three vectors per row
      {1, 16, 1, 4, 130, 16, false, {1, 1, 4, 130}},  // one key/value head for 16 query heads: 64 rows
  };
  const float scale = 0.125f;
  for (const Case& c : cases) {
    const at::Tensor q = at::randn({c.batch, c.q_len, c.q_heads, c.head_dim}).transpose(1, 2);
    // Keys stored [B, S, H, E] (a cache written token by token), read by strides.
    const at::Tensor k = at::randn({c.batch, c.kv_len, c.kv_heads, c.head_dim}).transpose(1, 2);
    const at::Tensor v = at::randn({c.batch, c.kv_heads, c.kv_len, c.head_dim});
    at::Tensor mask;
    if (!c.mask_shape.empty()) {
      mask = at::randn(c.mask_shape);
      mask.select(-1, 0).fill_(-std::numeric_limits<float>::infinity());
      mask.select(0, 0).select(-2, c.mask_shape[2] - 1).fill_(-std::numeric_limits<float>::infinity());  // sees none
    }
    const at::Tensor expected = Reference(q, k, v, mask, scale, c.causal);
    const at::Tensor lse_or_inf = at::logsumexp(ReferenceScores(q, k, mask, scale, c.causal), {-1});
    const at::Tensor expected_lse = lse_or_inf.masked_fill(lse_or_inf.isneginf(), 0.0);
    const std::string shape = "q_len " + std::to_string(c.q_len) + " heads " + std::to_string(c.q_heads) + "/" +
                              std::to_string(c.kv_heads) + " kv_len " + std::to_string(c.kv_len);
    auto check = [&](const std::string& where, const std::function<void(FlashAttentionArgs&)>& run) {
      const at::Tensor out = at::full(expected.sizes(), std::nanf(""));
      FlashAttentionArgs a = ArgsOf(q, k, v, mask, out, scale, c.causal);
      ASSERT_TRUE(DecodeAttentionApplies(a)) << shape;
      const at::Tensor lse = at::full({c.batch, c.q_len, c.q_heads}, std::nanf("")).transpose(1, 2);
      a.lse = lse.data_ptr<float>();
      for (int d = 0; d < 3; ++d) a.lse_strides[d] = lse.stride(d);
      run(a);
      EXPECT_LT(out.sub(expected).abs().max().item<float>(), 2e-5) << where << " " << shape;
      EXPECT_LT(MaxError(lse.to(at::kDouble), expected_lse), 2e-5) << where << " " << shape << " (log-sum-exp)";
    };
    for (const auto& [name, body] : DecodeBodies())
      check(name, [&, body = body](FlashAttentionArgs& a) {
        flash_detail::DecodeSplit whole;
        whole.chunk_len = c.kv_len;
        body(a, whole, 0, c.batch * c.kv_heads);
      });
    for (const int64_t chunks : {2, 3, 7})
      check(std::to_string(chunks) + " chunks", [&](FlashAttentionArgs& a) { DecodeAttention(a, chunks); });
  }
}

TEST(FlashAttentionTest, TheDecodeKernelTakesAtMostItsRowsPerKeyHead) {
  auto args = [](int64_t q_heads, int64_t kv_heads, int64_t q_len) {
    FlashAttentionArgs a;
    a.batch = 1;
    a.q_heads = q_heads;
    a.kv_heads = kv_heads;
    a.q_len = q_len;
    a.kv_len = 100;
    a.head_dim = 64;
    return a;
  };
  if (!FlashAttentionApplies(64)) GTEST_SKIP() << "no AVX2 or AVX-512 on this CPU";
  EXPECT_TRUE(DecodeAttentionApplies(args(32, 8, 16)));   // 4 x 16 = 64 rows
  EXPECT_FALSE(DecodeAttentionApplies(args(32, 8, 17)));  // 68
  EXPECT_FALSE(DecodeAttentionApplies(args(128, 1, 1)));  // 128
  EXPECT_FALSE(DecodeAttentionApplies(args(12, 8, 1)));   // heads not a multiple of key heads
  EXPECT_FALSE(DecodeAttentionApplies(args(8, 8, 0)));    // no query
}

// Attention's gradients in float64 from the probabilities exp(scores - lse) (0 for a row that
// sees no key): dV = P^T dO, dS = P (dO V^T - rowsum(dO O)) scale, dQ = dS K, dK = dS^T Q, the key
// and value heads' summed over their query group.
struct Gradients {
  at::Tensor q, k, v;
};
Gradients ReferenceGradients(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                             const at::Tensor& grad_out, double scale, bool causal) {
  const int64_t group = q.size(1) / k.size(1);
  const at::Tensor scores = ReferenceScores(q, k, mask, scale, causal);
  const at::Tensor lse = at::logsumexp(scores, {-1}, true);
  const at::Tensor p = scores.sub(lse.masked_fill(lse.isneginf(), 0.0)).exp();
  const at::Tensor qd = q.to(at::kDouble), dout = grad_out.to(at::kDouble);
  const at::Tensor kr = k.to(at::kDouble).repeat_interleave(group, 1),
                   vr = v.to(at::kDouble).repeat_interleave(group, 1);
  const at::Tensor row_dot = dout.mul(at::matmul(p, vr)).sum(-1, true);
  const at::Tensor ds = p.mul(at::matmul(dout, vr.transpose(-1, -2)).sub(row_dot)).mul(scale);
  auto over_group = [&](const at::Tensor& x) {
    return x.reshape({k.size(0), k.size(1), group, k.size(2), k.size(3)}).sum(2).to(at::kFloat);
  };
  return {at::matmul(ds, kr).to(at::kFloat), over_group(at::matmul(ds.transpose(-1, -2), qd)),
          over_group(at::matmul(p.transpose(-1, -2), dout))};
}

auto BackwardBodies() { return BodiesThisCpuRuns(flash_detail::BackwardAvx2, flash_detail::BackwardAvx512); }

FlashAttentionGradArgs GradArgsOf(const FlashAttentionArgs& forward, const at::Tensor& grad_out, Gradients& grads) {
  FlashAttentionGradArgs g;
  g.forward = forward;
  g.grad_out = grad_out.const_data_ptr<float>();
  g.grad_q = grads.q.data_ptr<float>();
  g.grad_k = grads.k.data_ptr<float>();
  g.grad_v = grads.v.data_ptr<float>();
  for (int d = 0; d < 3; ++d) {
    g.grad_out_strides[d] = grad_out.stride(d);
    g.grad_q_strides[d] = grads.q.stride(d);
    g.grad_k_strides[d] = grads.k.stride(d);
    g.grad_v_strides[d] = grads.v.stride(d);
  }
  return g;
}

// The backward from the forward's float64 output and log-sum-exp (each row's, 0 or -inf where a
// row sees no key: a saved -inf comes from a forward that was not one kernel).
TEST(FlashAttentionTest, EveryBackwardBodyMatchesFloat64Gradients) {
  const std::vector<Case> cases = {
      {2, 4, 4, 64, 64, 16, false, {}},                // one block
      {1, 8, 2, 130, 130, 64, true, {}},               // grouped heads, causal, partial blocks and tiles
      {2, 2, 2, 37, 200, 32, true, {}},                // fewer queries than keys: top-left causal
      {1, 6, 2, 70, 129, 48, false, {1, 6, 70, 129}},  // a full mask; three vectors per row
      {2, 3, 3, 67, 67, 32, false, {2, 1, 1, 67}},     // a padding mask
  };
  const float scale = 0.3f;
  for (const Case& c : cases) {
    const at::Tensor q = at::randn({c.batch, c.q_len, c.q_heads, c.head_dim}).transpose(1, 2);
    const at::Tensor k = at::randn({c.batch, c.kv_len, c.kv_heads, c.head_dim}).transpose(1, 2);
    const at::Tensor v = at::randn({c.batch, c.kv_heads, c.kv_len, c.head_dim});
    const at::Tensor grad_out = at::randn({c.batch, c.q_len, c.q_heads, c.head_dim}).transpose(1, 2);
    at::Tensor mask;
    if (!c.mask_shape.empty()) {
      mask = at::randn(c.mask_shape);
      mask.select(-1, 0).fill_(-std::numeric_limits<float>::infinity());
      if (c.mask_shape[2] > 1) mask.select(2, 1).fill_(-std::numeric_limits<float>::infinity());  // a row sees none
    }
    const Gradients expected = ReferenceGradients(q, k, v, mask, grad_out, scale, c.causal);
    at::Tensor out = Reference(q, k, v, mask, scale, c.causal);
    const at::Tensor lse = at::logsumexp(ReferenceScores(q, k, mask, scale, c.causal), {-1}).to(at::kFloat);
    for (const auto& [name, body] : BackwardBodies()) {
      Gradients got{at::full(q.sizes(), std::nanf("")), at::full(k.sizes(), std::nanf("")),
                    at::full(v.sizes(), std::nanf(""))};
      FlashAttentionArgs forward = ArgsOf(q, k, v, mask, out, scale, c.causal);
      forward.lse = const_cast<float*>(lse.const_data_ptr<float>());
      for (int d = 0; d < 3; ++d) forward.lse_strides[d] = lse.stride(d);
      body(GradArgsOf(forward, grad_out, got), 0, c.batch * c.kv_heads);
      const std::string where = name + " q_len " + std::to_string(c.q_len) + " kv_len " + std::to_string(c.kv_len);
      EXPECT_LT(got.q.sub(expected.q).abs().max().item<float>(), 1e-4) << where << " dQ";
      EXPECT_LT(got.k.sub(expected.k).abs().max().item<float>(), 1e-4) << where << " dK";
      EXPECT_LT(got.v.sub(expected.v).abs().max().item<float>(), 1e-4) << where << " dV";
    }
  }
}

TEST(FlashAttentionTest, TheDispatchedKernelSplitsOverThreadsAndKeepsTheNumbers) {
  if (!FlashAttentionApplies(64)) GTEST_SKIP() << "no AVX2 or AVX-512 on this CPU";
  const at::Tensor q = at::randn({2, 8, 300, 64}), k = at::randn({2, 4, 300, 64}), v = at::randn({2, 4, 300, 64});
  const at::Tensor out = at::empty({2, 8, 300, 64});
  FlashAttention(ArgsOf(q, k, v, at::Tensor(), out, 0.125f, true));
  EXPECT_LT(out.sub(Reference(q, k, v, at::Tensor(), 0.125, true)).abs().max().item<float>(), 2e-5);
  EXPECT_FALSE(FlashAttentionApplies(40));  // not a multiple of 16: ATen's kernel only

  Gradients grads{at::empty_like(q), at::empty_like(k), at::empty_like(v)};
  const at::Tensor grad_out = at::randn({2, 8, 300, 64});
  const at::Tensor scores = ReferenceScores(q, k, at::Tensor(), 0.125, true);
  const at::Tensor lse = at::logsumexp(scores, {-1}).to(at::kFloat);
  FlashAttentionArgs forward = ArgsOf(q, k, v, at::Tensor(), out, 0.125f, true);
  forward.lse = const_cast<float*>(lse.const_data_ptr<float>());
  for (int d = 0; d < 3; ++d) forward.lse_strides[d] = lse.stride(d);
  FlashAttentionBackward(GradArgsOf(forward, grad_out, grads));
  const Gradients expected = ReferenceGradients(q, k, v, at::Tensor(), grad_out, 0.125, true);
  EXPECT_LT(grads.q.sub(expected.q).abs().max().item<float>(), 1e-4);
  EXPECT_LT(grads.k.sub(expected.k).abs().max().item<float>(), 1e-4);
  EXPECT_LT(grads.v.sub(expected.v).abs().max().item<float>(), 1e-4);
}

}  // namespace
}  // namespace ge::cpu
