// TransposeAddBias gives y = cᵀ (+ bias per row of c) exactly, for whole 8 x 8 tiles (AVX2
// registers on a CPU that has them), edge tiles, output rows with padding and bands split over
// the threads.
#include "devices/cpu/kernels/transpose_rows.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <tuple>
#include <vector>

namespace ge::cpu {
namespace {

class TransposeRowsTest : public ::testing::TestWithParam<std::tuple<int64_t, int64_t, bool>> {};

TEST_P(TransposeRowsTest, EveryElementLandsTransposedWithItsRowsBias) {
  const auto [rows, cols, with_bias] = GetParam();
  const int64_t y_stride = rows + 3;  // rows of y apart by more than their length
  std::vector<float> c(rows * cols), bias(rows);
  for (int64_t i = 0; i < rows * cols; ++i) c[i] = static_cast<float>(i % 1000) * 0.25f - 7.f;
  for (int64_t n = 0; n < rows; ++n) bias[n] = static_cast<float>(n) * 0.5f + 0.125f;
  const float kPad = -12345.f;
  std::vector<float> y(cols * y_stride, kPad);
  TransposeAddBias(c.data(), rows, cols, with_bias ? bias.data() : nullptr, y.data(), y_stride);
  for (int64_t m = 0; m < cols; ++m) {
    for (int64_t n = 0; n < rows; ++n)
      ASSERT_EQ(y[m * y_stride + n], c[n * cols + m] + (with_bias ? bias[n] : 0.f)) << "m " << m << " n " << n;
    for (int64_t n = rows; n < y_stride; ++n) ASSERT_EQ(y[m * y_stride + n], kPad) << "padding written at m " << m;
  }
}

// (rows of c, columns of c, bias): one whole tile, tiles only, ragged edges on either side, a
// single row or column, and a product's worth (1408 x 64: bands on both threads).
INSTANTIATE_TEST_SUITE_P(Shapes, TransposeRowsTest,
                         ::testing::Combine(::testing::Values<int64_t>(8, 16, 13, 1, 1408),
                                            ::testing::Values<int64_t>(8, 64, 7, 1, 21), ::testing::Bool()));

}  // namespace
}  // namespace ge::cpu
