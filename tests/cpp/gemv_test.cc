// The few-row product kernels (gemv.h) against ATen's product: each instruction set's body (the
// AVX2 one too, on a CPU that also has AVX-512) of both walks (one weight row at a time, eight
// side by side), for 1 to kGemvMaxRows input rows, depths that end in a vector pair, a single
// vector and a scalar tail, a bias or none, row strides wider than the rows, and work items that
// split a group of eight weight rows.
#include "devices/cpu/kernels/gemv.h"

#include <gtest/gtest.h>

#include <ATen/ops/empty.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/randn.h>

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace ge::cpu {
namespace {

using Body = void (*)(const GemvArgs&, int64_t, int64_t);

// The portable and dispatched bodies, and each instruction set's the CPU has.
std::vector<std::pair<std::string, Body>> BodiesOf(Body portable, Body dispatched, Body avx2, Body avx512) {
  std::vector<std::pair<std::string, Body>> bodies{{"portable", portable}, {"dispatched", dispatched}};
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) bodies.emplace_back("avx2", avx2);
  if (__builtin_cpu_supports("avx512f")) bodies.emplace_back("avx512", avx512);
  return bodies;
}

// y = x · wᵀ (+ bias) over the tensors' rows and strides.
GemvArgs ArgsOf(const at::Tensor& x, const at::Tensor& w, const at::Tensor* bias, at::Tensor& y) {
  return GemvArgs{x.const_data_ptr<float>(),
                  x.size(0),
                  x.stride(0),
                  w.const_data_ptr<float>(),
                  w.size(0),
                  w.size(1),
                  bias ? bias->const_data_ptr<float>() : nullptr,
                  y.data_ptr<float>(),
                  y.stride(0)};
}

std::vector<std::pair<std::string, Body>> Bodies() {
  std::vector<std::pair<std::string, Body>> bodies =
      BodiesOf(gemv_detail::RowsPortable, GemvRows, gemv_detail::RowsAvx2, gemv_detail::RowsAvx512);
  for (auto& [name, body] : BodiesOf(gemv_detail::RowsPortable, GemvInterleavedRows, gemv_detail::InterleavedAvx2,
                                     gemv_detail::InterleavedAvx512))
    if (name != "portable") bodies.emplace_back("interleaved " + name, body);
  return bodies;
}

// NaN just past each input row's end reaches no output: no body reads past a row. No rows: no
// work (nothing read, nothing written).
TEST(GemvTest, EveryRowCountAndDepthMatchesAten) {
  for (int64_t rows = 0; rows <= kGemvMaxRows; ++rows)
    for (int64_t k : {32, 59, 133}) {
      const int64_t n = 21;                     // work items of 3 and 18 rows: two groups of eight and two alone
      at::Tensor x = at::randn({rows, k + 5});  // row stride k + 5
      x.select(1, k).fill_(std::numeric_limits<float>::quiet_NaN());
      x = x.narrow(1, 0, k);
      const at::Tensor w = at::randn({n, k}), bias = at::randn({n});
      for (bool with_bias : {false, true}) {
        at::Tensor expected = at::matmul(x, w.t());
        if (with_bias) expected = expected.add(bias);
        for (const auto& [name, body] : Bodies()) {
          at::Tensor y = at::empty({rows, n + 3});  // row stride n + 3
          const GemvArgs args = ArgsOf(x, w, with_bias ? &bias : nullptr, y);
          body(args, 0, 3);  // two calls, as two work items would
          body(args, 3, n);
          const at::Tensor got = y.narrow(1, 0, n);
          EXPECT_TRUE(got.allclose(expected, 1e-4, 1e-4))
              << name << " rows=" << rows << " k=" << k << " bias=" << with_bias << ": max abs err "
              << got.sub(expected).abs().max().item<float>();
        }
      }
    }
}

// A weight row's output does not depend on how the rows were split into work items (threads):
// every output of one call over all rows is bitwise the one of calls over pieces that cut groups
// of eight anywhere. (The interleaved walk once summed the rows after its last whole group
// in another order: a graph and its replay differed by an ulp where their thread splits did.)
TEST(GemvTest, OutputsDoNotDependOnTheWorkSplit) {
  for (int64_t rows = 1; rows <= kGemvMaxRows; ++rows) {
    const int64_t n = 45, k = 77;
    const at::Tensor x = at::randn({rows, k}), w = at::randn({n, k}), bias = at::randn({n});
    for (const auto& [name, body] : Bodies()) {
      at::Tensor whole = at::empty({rows, n}), pieces = at::empty({rows, n});
      body(ArgsOf(x, w, &bias, whole), 0, n);
      const GemvArgs args = ArgsOf(x, w, &bias, pieces);
      int64_t begin = 0;
      for (int64_t end : {int64_t{5}, int64_t{13}, int64_t{14}, int64_t{30}, n}) {
        body(args, begin, end);
        begin = end;
      }
      EXPECT_TRUE(whole.equal(pieces)) << name << " rows=" << rows << ": max abs diff "
                                       << whole.sub(pieces).abs().max().item<float>();
    }
  }
}

std::vector<std::pair<std::string, Body>> FewColumnBodies() {
  return BodiesOf(gemv_detail::FewColumnsPortable, FewColumnRows, gemv_detail::FewColumnsAvx2,
                  gemv_detail::FewColumnsAvx512);
}

// Many rows times 0..kFewColumnsMax weight rows (none: nothing read, nothing written): every
// column count (whole and partial row groups per step), depths shorter than a vector, ending in
// a partial vector or a whole one, split over two work items at a row that is not a group
// boundary, strided rows; and NaN or infinity in a row reaches only that row's outputs (the
// partial vector is not read past the row).
TEST(GemvTest, FewColumnsMatchAtenForEveryColumnCount) {
  for (int64_t n = 0; n <= kFewColumnsMax; ++n)
    for (int64_t k : {5, 32, 141}) {
      const int64_t rows = 37;
      at::Tensor x = at::randn({rows, k + 3});
      x.select(1, k).fill_(std::numeric_limits<float>::quiet_NaN());  // just past each row's end
      x = x.narrow(1, 0, k);
      const at::Tensor w = at::randn({n, k}), bias = at::randn({n});
      for (bool with_bias : {false, true}) {
        at::Tensor expected = at::matmul(x, w.t());
        if (with_bias) expected = expected.add(bias);
        for (const auto& [name, body] : FewColumnBodies()) {
          at::Tensor y = at::empty({rows, n + 2});
          const GemvArgs args = ArgsOf(x, w, with_bias ? &bias : nullptr, y);
          body(args, 0, 11);
          body(args, 11, rows);
          const at::Tensor got = y.narrow(1, 0, n);
          EXPECT_TRUE(got.allclose(expected, 1e-4, 1e-4))
              << name << " n=" << n << " k=" << k << " bias=" << with_bias << ": max abs err "
              << got.sub(expected).abs().max().item<float>();
        }
      }
    }
}

}  // namespace
}  // namespace ge::cpu
