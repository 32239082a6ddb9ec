// devices/onednn/conv2d.h against a direct loop over the definition of a convolution: strides,
// padding, dilation, groups, bias, per-channel scale and shift, residual and activations,
// channels-last and plain buffers, and a weight given in either layout.
#include "devices/onednn/conv2d.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "onednn_reference.h"

namespace ge::onednn {
namespace {

struct Case {
  int64_t n, c, h, w, k, kh, kw, stride, pad, dilation, groups;
  bool bias, residual;
  Activation activation;
  bool channels_last, weight_channels_last;
  bool channel_affine = false;  // y * scale[k] + shift[k] after the bias (an inference batch norm)
};

// Element strides of an NCHW-ordered tensor stored NCHW or NHWC.
Dims4 StridesOf(const Dims4& s, bool channels_last) {
  if (channels_last) return {s[1] * s[2] * s[3], 1, s[3] * s[1], s[1]};
  return {s[1] * s[2] * s[3], s[2] * s[3], s[3], 1};
}

int64_t At(const Dims4& strides, int64_t a, int64_t b, int64_t c, int64_t d) {
  return a * strides[0] + b * strides[1] + c * strides[2] + d * strides[3];
}

std::vector<float> Random(size_t n, std::mt19937& gen) {
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// A channels-last convolution's spec (stride 1, no padding, groups 1 unless set after).
Conv2DSpec ChannelsLastSpec(const Dims4& x, const Dims4& w, const Dims4& y) {
  Conv2DSpec spec;
  spec.x_sizes = x;
  spec.x_strides = StridesOf(x, true);
  spec.w_sizes = w;
  spec.y_sizes = y;
  spec.y_strides = StridesOf(y, true);
  return spec;
}

class OneDnnConv2DTest : public ::testing::TestWithParam<Case> {};

TEST_P(OneDnnConv2DTest, MatchesTheDefinition) {
  const Case t = GetParam();
  const int64_t oh = (t.h + 2 * t.pad - t.dilation * (t.kh - 1) - 1) / t.stride + 1;
  const int64_t ow = (t.w + 2 * t.pad - t.dilation * (t.kw - 1) - 1) / t.stride + 1;
  Conv2DSpec spec;
  spec.x_sizes = {t.n, t.c, t.h, t.w};
  spec.x_strides = StridesOf(spec.x_sizes, t.channels_last);
  spec.w_sizes = {t.k, t.c / t.groups, t.kh, t.kw};
  spec.y_sizes = {t.n, t.k, oh, ow};
  spec.y_strides = StridesOf(spec.y_sizes, t.channels_last);
  spec.stride = {t.stride, t.stride};
  spec.padding = {t.pad, t.pad};
  spec.dilation = {t.dilation, t.dilation};
  spec.groups = t.groups;
  spec.bias = t.bias;
  spec.channel_affine = t.channel_affine;
  spec.residual = t.residual;
  spec.residual_strides = spec.y_strides;
  spec.activation = t.activation;
  const Dims4 w_strides = StridesOf(spec.w_sizes, t.weight_channels_last);

  std::mt19937 gen(7);
  const std::vector<float> x = Random(static_cast<size_t>(t.n * t.c * t.h * t.w), gen);
  const std::vector<float> weight = Random(static_cast<size_t>(t.k * (t.c / t.groups) * t.kh * t.kw), gen);
  const std::vector<float> bias = Random(static_cast<size_t>(t.k), gen);
  const std::vector<float> residual = Random(static_cast<size_t>(t.n * t.k * oh * ow), gen);
  const std::vector<float> scale = Random(static_cast<size_t>(t.k), gen), shift = Random(static_cast<size_t>(t.k), gen);

  auto conv = Conv2D::Create(spec);
  ASSERT_TRUE(conv.ok()) << conv.status().ToString();
  EXPECT_FALSE((*conv)->Implementation().empty());
  const size_t bytes = ((*conv)->PackedWeightBytes() + 63) / 64 * 64;
  const std::unique_ptr<void, decltype(&std::free)> packed(std::aligned_alloc(64, bytes), &std::free);
  ASSERT_TRUE((*conv)->PackWeight(weight.data(), w_strides, packed.get()).ok());
  std::vector<float> y(residual.size(), std::nanf(""));
  ASSERT_TRUE(
      (*conv)->Run({x.data(), packed.get(), bias.data(), scale.data(), shift.data(), residual.data(), y.data()}).ok());

  const int64_t per_group_in = t.c / t.groups, per_group_out = t.k / t.groups;
  double worst = 0;
  for (int64_t b = 0; b < t.n; ++b)
    for (int64_t o = 0; o < t.k; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double sum = t.bias ? bias[o] : 0.0;
          const int64_t g = o / per_group_out;
          for (int64_t ci = 0; ci < per_group_in; ++ci)
            for (int64_t r = 0; r < t.kh; ++r)
              for (int64_t s = 0; s < t.kw; ++s) {
                const int64_t row = i * t.stride - t.pad + r * t.dilation, col = j * t.stride - t.pad + s * t.dilation;
                if (row < 0 || row >= t.h || col < 0 || col >= t.w) continue;
                sum += double{x[At(spec.x_strides, b, g * per_group_in + ci, row, col)]} *
                       weight[At(w_strides, o, ci, r, s)];
              }
          const int64_t at = At(spec.y_strides, b, o, i, j);
          if (t.channel_affine) sum = sum * scale[o] + shift[o];
          if (t.residual) sum += residual[at];
          sum = ReferenceActivation(t.activation, sum);
          worst = std::max(worst, std::abs(sum - y[at]));
        }
  EXPECT_LT(worst, 1e-4) << "implementation " << (*conv)->Implementation();
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, OneDnnConv2DTest,
    ::testing::Values(
        //   n  c  h  w  k kh kw st pad dil grp bias  res    activation              nhwc  w-nhwc
        Case{1, 16, 9, 9, 32, 3, 3, 1, 1, 1, 1, true, false, Activation::kNone, true, false},
        Case{2, 16, 9, 9, 32, 3, 3, 1, 1, 1, 1, false, true, Activation::kRelu, true, true},
        Case{2, 8, 11, 7, 16, 3, 3, 2, 1, 1, 1, true, false, Activation::kRelu, true, false},
        Case{1, 3, 17, 17, 8, 7, 7, 2, 3, 1, 1, false, false, Activation::kRelu, true, false},     // a ResNet stem
        Case{1, 16, 10, 10, 16, 3, 3, 1, 2, 2, 1, true, true, Activation::kNone, true, false},     // dilated
        Case{2, 16, 8, 8, 32, 3, 3, 1, 1, 1, 4, true, false, Activation::kSilu, true, false},      // grouped
        Case{1, 16, 8, 8, 16, 3, 3, 1, 1, 1, 16, true, false, Activation::kGeluErf, true, false},  // depthwise
        Case{1, 16, 8, 8, 16, 3, 3, 1, 1, 1, 1, true, true, Activation::kGeluTanh, true, false},
        Case{1, 16, 8, 8, 16, 1, 1, 1, 0, 1, 1, false, false, Activation::kSigmoid, true, false},
        Case{1, 16, 8, 8, 16, 1, 1, 1, 0, 1, 1, true, false, Activation::kTanh, true, false},
        Case{2, 32, 6, 6, 16, 1, 1, 1, 0, 1, 1, true, true, Activation::kRelu, false, false},  // NCHW buffers
        // a batch norm after the convolution: alone, and before a residual and ReLU (ResNet's block)
        Case{1, 16, 9, 9, 32, 3, 3, 1, 1, 1, 1, true, false, Activation::kNone, true, false, true},
        Case{2, 16, 8, 8, 16, 3, 3, 1, 1, 1, 1, false, true, Activation::kRelu, true, false, true},
        Case{2, 8, 11, 7, 16, 3, 3, 2, 1, 1, 1, false, false, Activation::kRelu, false, false, true}));

TEST(OneDnnConv2DTest, ChannelsThatDoNotMatchTheGroupsAreAnError) {
  Conv2DSpec spec = ChannelsLastSpec({1, 6, 4, 4}, {8, 4, 3, 3}, {1, 8, 2, 2});  // 2 groups of 4 input channels: 8 != 6
  spec.groups = 2;
  auto conv = Conv2D::Create(spec);
  ASSERT_FALSE(conv.ok());
  EXPECT_NE(conv.status().message().find("groups"), std::string::npos) << conv.status().message();
}

TEST(OneDnnConv2DTest, AnEmptyBatchIsAnErrorNotACrash) {
  const Conv2DSpec spec = ChannelsLastSpec({0, 4, 6, 6}, {8, 4, 3, 3}, {0, 8, 4, 4});
  auto conv = Conv2D::Create(spec);
  ASSERT_FALSE(conv.ok());
  EXPECT_NE(conv.status().message().find("empty"), std::string::npos) << conv.status().message();
}

// The threads this process has.
int ProcessThreads() {
  int count = 0;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (const dirent* entry = readdir(dir)) count += entry->d_name[0] != '.';
    closedir(dir);
  }
  return count;
}

TEST(OneDnnConv2DTest, AThreadGivenFewerCoresRunsWithoutATeamOfItsOwn) {
  // A stream's thread (StreamRunner) sets its OpenMP threads to its share of the cores. A
  // primitive planned on a thread with more must not start a team of that size on it: the team
  // oversubscribes the cores, and its threads stay (GNU OpenMP then stops spinning between
  // regions, process-wide).
  using SetThreads = void (*)(int);
  using GetThreads = int (*)();
  const auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  const auto get = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  if (set == nullptr || get == nullptr || get() < 2) GTEST_SKIP() << "needs OpenMP and 2 threads";
  Conv2DSpec spec = ChannelsLastSpec({1, 32, 14, 14}, {32, 32, 3, 3}, {1, 32, 14, 14});
  spec.stride = {1, 1};
  spec.padding = {1, 1};
  spec.dilation = {1, 1};
  auto conv = Conv2D::Create(spec);  // planned for this thread's (2 or more) threads
  ASSERT_TRUE(conv.ok()) << conv.status().message();
  std::mt19937 gen(7);
  const std::vector<float> x = Random(32 * 14 * 14, gen), w = Random(32 * 32 * 9, gen);
  const size_t bytes = ((*conv)->PackedWeightBytes() + 63) / 64 * 64;
  const std::unique_ptr<void, decltype(&std::free)> packed(std::aligned_alloc(64, bytes), &std::free);
  ASSERT_TRUE((*conv)->PackWeight(w.data(), StridesOf(spec.w_sizes, false), packed.get()).ok());
  std::vector<float> here(x.size()), there(x.size());
  auto run = [&](std::vector<float>& y) {
    Conv2DBuffers b;
    b.x = x.data();
    b.packed_weight = packed.get();
    b.y = y.data();
    return (*conv)->Run(b);
  };
  ASSERT_TRUE(run(here).ok());
  int before = 0, after = 0;
  Status status;
  std::thread stream([&] {
    set(1);
    before = ProcessThreads();
    status = run(there);
    after = ProcessThreads();
  });
  stream.join();
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(after, before) << "the run started threads of its own";
  for (size_t i = 0; i < here.size(); ++i) ASSERT_NEAR(here[i], there[i], 1e-4f) << i;  // one thread or two
}

}  // namespace
}  // namespace ge::onednn
