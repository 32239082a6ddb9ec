// Every implementation of the convolution weight gradient (filter_gradient.h) gives ATen's
// numbers, whichever the measurement picks on a given CPU: strides, padding, dilation, 1x1 and
// rectangular filters, and grouped convolutions (oneDNN only).
#include <gtest/gtest.h>

#include <ATen/ops/allclose.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/convolution_backward.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/randn.h>

#include "devices/cpu/kernels/filter_gradient.h"

namespace ge::cpu {
namespace {

struct Case {
  std::vector<int64_t> x, w;
  ConvWindow window;
  size_t candidates;
};

TEST(FilterGradientTest, EveryCandidateMatchesAtenConvolutionBackward) {
  const std::vector<Case> cases = {
      {{2, 8, 5, 5}, {16, 8, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 1}, 2},
      {{2, 3, 11, 9}, {4, 3, 5, 3}, {{2, 1}, {2, 0}, {1, 1}, 1}, 2},
      {{1, 6, 8, 8}, {6, 6, 3, 3}, {{1, 1}, {2, 2}, {2, 2}, 1}, 2},
      {{3, 4, 7, 7}, {8, 4, 1, 1}, {{2, 2}, {0, 0}, {1, 1}, 1}, 2},
      {{2, 8, 6, 6}, {8, 4, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 2}, 1},
  };
  for (const Case& k : cases) {
    const at::Tensor x = at::randn(k.x), w = at::randn(k.w);
    const ConvWindow& c = k.window;
    const at::Tensor y = at::convolution(x, w, std::nullopt, c.stride, c.padding, c.dilation, false, {0, 0}, c.groups);
    const at::Tensor dy = at::randn(y.sizes());
    const at::Tensor expected = std::get<1>(at::convolution_backward(
        dy, x, w, std::nullopt, c.stride, c.padding, c.dilation, false, {0, 0}, c.groups, {false, true, false}));
    at::Tensor out = at::empty(k.w);
    const std::vector<KernelCandidate> candidates = FilterGradientCandidates(x, dy, c, out);
    ASSERT_EQ(candidates.size(), k.candidates) << FilterGradientKey(x, dy, c, out);
    for (const KernelCandidate& candidate : candidates) {
      out.fill_(-1);
      candidate.run();
      EXPECT_TRUE(at::allclose(out, expected, 1e-4, 1e-4)) << candidate.name << " " << FilterGradientKey(x, dy, c, out);
    }
  }
}

}  // namespace
}  // namespace ge::cpu
