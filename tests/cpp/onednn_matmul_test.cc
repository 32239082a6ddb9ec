// devices/onednn/matmul.h against the definition y = act(x · w + bias): a weight read in place
// in either layout (nn.Linear's [n, k] is w^T) or packed into oneDNN's, a strided output, and
// every post-op activation.
#include "devices/onednn/matmul.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include "onednn_reference.h"

namespace ge::onednn {
namespace {

struct Case {
  int64_t m, k, n;
  bool bias, weight_transposed, packed;
  Activation activation;
  int64_t y_row_stride_pad;  // y's rows this many elements longer than n (a column slice of a wider buffer)
};

class OneDnnMatMulTest : public ::testing::TestWithParam<Case> {};

TEST_P(OneDnnMatMulTest, MatchesTheDefinition) {
  const Case t = GetParam();
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = dist(gen);
    return v;
  };
  const std::vector<float> x = random(static_cast<size_t>(t.m * t.k)), w = random(static_cast<size_t>(t.k * t.n)),
                           bias = random(static_cast<size_t>(t.n));
  MatMulSpec spec;
  spec.x_sizes = {t.m, t.k};
  spec.x_strides = {t.k, 1};
  spec.w_sizes = {t.k, t.n};
  spec.w_strides = t.weight_transposed ? Dims2x{1, t.k} : Dims2x{t.n, 1};  // w^T stored [n, k]
  const int64_t ld = t.n + t.y_row_stride_pad;
  spec.y_strides = {ld, 1};
  spec.bias = t.bias;
  spec.packed_weight = t.packed;
  spec.activation = t.activation;
  auto mm = MatMul::Create(spec);
  ASSERT_TRUE(mm.ok()) << mm.status().ToString();
  EXPECT_FALSE((*mm)->Implementation().empty());
  std::unique_ptr<void, decltype(&std::free)> packed(nullptr, &std::free);
  const void* weight = w.data();
  if (t.packed) {
    packed.reset(std::aligned_alloc(64, ((*mm)->PackedWeightBytes() + 63) / 64 * 64));
    ASSERT_TRUE((*mm)->PackWeight(w.data(), spec.w_strides, packed.get()).ok());
    weight = packed.get();
  }
  std::vector<float> y(static_cast<size_t>(t.m * ld), -7.f);
  ASSERT_TRUE((*mm)->Run(x.data(), weight, bias.data(), y.data()).ok());
  double worst = 0;
  for (int64_t i = 0; i < t.m; ++i) {
    for (int64_t j = 0; j < t.n; ++j) {
      double sum = t.bias ? bias[j] : 0.0;
      for (int64_t p = 0; p < t.k; ++p)
        sum += double{x[i * t.k + p]} * w[p * spec.w_strides[0] + j * spec.w_strides[1]];
      worst = std::max(worst, std::abs(ReferenceActivation(t.activation, sum) - y[i * ld + j]));
    }
    for (int64_t j = t.n; j < ld; ++j) EXPECT_EQ(y[i * ld + j], -7.f) << "wrote outside its columns";
  }
  EXPECT_LT(worst, 1e-4) << "implementation " << (*mm)->Implementation();
}

INSTANTIATE_TEST_SUITE_P(Shapes, OneDnnMatMulTest,
                         ::testing::Values(
                             //   m   k   n  bias  w^T   packed activation             y pad
                             Case{4, 32, 24, true, true, false, Activation::kNone, 0},
                             Case{1, 64, 48, true, true, true, Activation::kGeluErf, 0},  // a decode step's row
                             Case{17, 40, 33, false, false, false, Activation::kRelu, 0},
                             Case{64, 96, 80, true, false, true, Activation::kSilu, 0},
                             Case{8, 16, 16, true, true, false, Activation::kGeluTanh, 16},  // a column slice of y
                             Case{8, 16, 16, false, true, true, Activation::kSigmoid, 5},
                             Case{3, 8, 5, true, false, false, Activation::kTanh, 0}));

TEST(OneDnnMatMulTest, OperandsThatDisagreeOnKAreAnError) {
  MatMulSpec spec;
  spec.x_sizes = {4, 8};
  spec.x_strides = {8, 1};
  spec.w_sizes = {9, 4};
  spec.w_strides = {4, 1};
  spec.y_strides = {4, 1};
  auto mm = MatMul::Create(spec);
  ASSERT_FALSE(mm.ok());
  EXPECT_NE(mm.status().message().find("disagree on k"), std::string::npos) << mm.status().message();
}

TEST(OneDnnMatMulTest, ABroadcastOperandIsLeftToOthers) {
  MatMulSpec spec;
  spec.x_sizes = {4, 8};
  spec.x_strides = {0, 1};  // one row expanded to four
  spec.w_sizes = {8, 4};
  spec.w_strides = {4, 1};
  spec.y_strides = {4, 1};
  auto mm = MatMul::Create(spec);
  ASSERT_FALSE(mm.ok());
  EXPECT_NE(mm.status().message().find("zero-stride"), std::string::npos) << mm.status().message();
}

TEST(OneDnnMatMulTest, AnEmptyOperandIsAnErrorNotACrash) {
  for (const Dims2x& x : {Dims2x{0, 8}, Dims2x{4, 0}}) {
    MatMulSpec spec;
    spec.x_sizes = x;
    spec.x_strides = {std::max<int64_t>(x[1], 1), 1};
    spec.w_sizes = {x[1], 4};
    spec.w_strides = {4, 1};
    spec.y_strides = {4, 1};
    auto mm = MatMul::Create(spec);
    ASSERT_FALSE(mm.ok());
    EXPECT_NE(mm.status().message().find("empty"), std::string::npos) << mm.status().message();
  }
}

}  // namespace
}  // namespace ge::onednn
