// The vector kernels' helpers that take a path per instruction set (lane folds, flag loads)
// give the same numbers on every one: the prelude is compiled for AVX-512, AVX2, AVX and SSE
// with a check against the scalar definitions, and run wherever this CPU has the set. (These
// machines differ: a Zen 3 runs the AVX2 path that a Zen 4 never takes.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "ge/autofuse/cpp_scalar.h"
#include "ge/autofuse/cpp_vector.h"

namespace ge::autofuse {
namespace {

// Flags (any nonzero byte) read at every offset, and sums / NaN-propagating maxima folded across
// lanes, against lane-by-lane scalar folds over the same pairs.
constexpr const char* kCheck = R"check(
#include <cmath>
#include <cstdio>
int main() {
  int bad = 0;
  uint8_t flags[64];
  for (int i = 0; i < 64; ++i) flags[i] = i % 5 == 0 ? (i % 3 ? 1 : 2) : 0;
  for (int off = 0; off + kGeW <= 64; ++off) {
    alignas(64) float t[kGeW];
    xsimd::select(ge_vload_bool(flags + off), GeV(1.f), GeV(0.f)).store_aligned(t);
    for (int l = 0; l < kGeW; ++l) bad += (t[l] != 0.f) != (flags[off + l] != 0);
  }
  for (int trial = 0; trial < 4; ++trial) {
    alignas(64) float x[kGeW], sums[kGeW], maxes[kGeW];
    for (int l = 0; l < kGeW; ++l) x[l] = sums[l] = maxes[l] = std::sin(l * 1.3f + trial) * 1000.f;
    if (trial == 2) x[kGeW - 3] = sums[kGeW - 3] = maxes[kGeW - 3] = NAN;
    if (trial == 3) x[1] = sums[1] = maxes[1] = -INFINITY;
    const GeV v = GeV::load_aligned(x);
    const float sum = ge_vfold(v, [](GeV a, GeV b) { return a + b; });
    const float max = ge_vfold(v, [](GeV a, GeV b) { return ge_vmax(a, b); });
    for (int n = kGeW / 2; n > 0; n /= 2)
      for (int l = 0; l < n; ++l) {
        sums[l] = sums[l] + sums[l + n];
        maxes[l] = ge_max(maxes[l], maxes[l + n]);
      }
    const auto same = [](float a, float b) { return a == b || (a != a && b != b); };
    if (!same(sum, sums[0]) || !same(max, maxes[0])) {
      std::printf("lanes %d trial %d: sum %.9g (scalar %.9g) max %g (scalar %g)\n", kGeW, trial, sum, sums[0], max, maxes[0]);
      ++bad;
    }
  }
  return bad == 0 ? 0 : 1;
}
)check";

struct Isa {
  const char* flags;
  const char* name;
  bool (*runs_here)();  // whether this CPU has the set
};

class VectorPreludeTest : public ::testing::TestWithParam<Isa> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(VectorPreludeTest);  // not on other CPUs

TEST_P(VectorPreludeTest, LaneFoldsAndFlagLoadsMatchTheScalarDefinitions) {
  const Isa isa = GetParam();
  if (std::system("c++ --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no C++ compiler";
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ge_vector_prelude_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path source = dir / "check.cc", binary = dir / "check";
  std::ofstream(source) << kScalarPrelude << kVectorPrelude << kCheck;
  const std::string compile = "c++ -O2 -std=c++17 -ffp-contract=off " + std::string(isa.flags) + " " + source.string() +
                              " -o " + binary.string() + " 2>&1";
  ASSERT_EQ(std::system(compile.c_str()), 0) << compile;
  const bool runs = isa.runs_here();
  if (runs) {
    EXPECT_EQ(std::system(binary.string().c_str()), 0) << isa.flags;
  }
  std::filesystem::remove_all(dir);
  if (!runs) GTEST_SKIP() << "compiled; this CPU has no " << isa.name << " to run it";
}

#if defined(__x86_64__)
INSTANTIATE_TEST_SUITE_P(EveryIsa, VectorPreludeTest,
                         ::testing::Values(Isa{"-mavx512f -mavx512bw -mavx512dq -mavx512vl -mfma", "AVX-512",
                                               [] { return __builtin_cpu_supports("avx512bw") != 0; }},
                                           Isa{"-mavx2 -mfma", "AVX2",
                                               [] { return __builtin_cpu_supports("avx2") != 0; }},
                                           Isa{"-mavx", "AVX", [] { return __builtin_cpu_supports("avx") != 0; }},
                                           Isa{"-mno-avx", "SSE", [] { return true; }}));
#endif

}  // namespace
}  // namespace ge::autofuse
