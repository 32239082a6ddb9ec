// The channels-last max pool (max_pool_nhwc.h), each instruction set's body, against ATen's
// max_pool2d: channel counts that fill whole vectors, leave a tail or are all tail, padding,
// windows past the edge (ceil mode's last window) and NaNs, which win as in ATen.
#include "devices/cpu/kernels/max_pool_nhwc.h"

#include <gtest/gtest.h>

#include <ATen/ops/max_pool2d.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace ge::cpu {
namespace {

using Body = void (*)(const NhwcPoolShape&, const float*, float*, int64_t, int64_t);

std::vector<std::pair<std::string, Body>> Bodies() {
  std::vector<std::pair<std::string, Body>> bodies{{"portable", max_pool_detail::RowsPortable}};
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    bodies.emplace_back("avx2", max_pool_detail::RowsAvx2);
  if (__builtin_cpu_supports("avx512f")) bodies.emplace_back("avx512", max_pool_detail::RowsAvx512);
  return bodies;
}

struct Case {
  int64_t n, c, h, w, kernel, stride, pad;
  bool ceil_mode;
};

void ExpectMatchesAten(const Case& k) {
  at::Tensor x = at::randn({k.n, k.c, k.h, k.w});
  x.view(-1)[7] = std::numeric_limits<float>::quiet_NaN();
  x.view(-1)[x.numel() - 5] = std::numeric_limits<float>::quiet_NaN();
  const at::Tensor expected =
      at::max_pool2d(x, {k.kernel, k.kernel}, {k.stride, k.stride}, {k.pad, k.pad}, {1, 1}, k.ceil_mode);
  NhwcPoolShape s{
      k.n,           k.h, k.w, k.c, expected.size(2), expected.size(3), {k.kernel, k.kernel}, {k.stride, k.stride},
      {k.pad, k.pad}};
  const at::Tensor x_nhwc = x.permute({0, 2, 3, 1}).contiguous();
  for (const auto& [name, body] : Bodies()) {
    at::Tensor y = at::zeros({k.n, s.oh, s.ow, k.c});
    body(s, x_nhwc.const_data_ptr<float>(), y.data_ptr<float>(), 0, k.n * s.oh / 2);  // two work items
    body(s, x_nhwc.const_data_ptr<float>(), y.data_ptr<float>(), k.n * s.oh / 2, k.n * s.oh);
    const at::Tensor got = y.permute({0, 3, 1, 2});
    EXPECT_TRUE(got.isnan().equal(expected.isnan())) << name << " c=" << k.c;
    EXPECT_TRUE(got.nan_to_num(0).allclose(expected.nan_to_num(0), 0, 0)) << name << " c=" << k.c;
  }
}

TEST(MaxPoolNhwcTest, EveryBodyMatchesAtensPoolWithNans) {
  for (int64_t c : {3, 16, 21, 64, 67}) {
    ExpectMatchesAten({2, c, 11, 9, 3, 2, 1, false});  // a ResNet stem's pool
    ExpectMatchesAten({1, c, 7, 8, 2, 2, 0, true});    // ceil mode: the last window past the edge
    ExpectMatchesAten({1, c, 5, 5, 3, 1, 1, false});
  }
}

}  // namespace
}  // namespace ge::cpu
