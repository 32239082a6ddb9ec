// Kernels chosen by measurement: the faster candidate wins, a key is timed once per process, a
// candidate that throws never wins, and every decision is recorded.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "devices/cpu/kernels/kernel_choice.h"

namespace ge::cpu {
namespace {

void Sleep(int us) { std::this_thread::sleep_for(std::chrono::microseconds(us)); }

const KernelChoice* Find(const std::vector<KernelChoice>& choices, const std::string& key) {
  for (const KernelChoice& c : choices)
    if (c.key == key) return &c;
  return nullptr;
}

TEST(KernelChoiceTest, TheFasterCandidateWinsAndIsRemembered) {
  int built = 0;
  auto candidates = [&built]() {
    ++built;
    return std::vector<KernelCandidate>{{"slow", [] { Sleep(2000); }}, {"fast", [] {}}};
  };
  EXPECT_EQ(ChooseByMeasurement("test slow-vs-fast", candidates), 1);
  EXPECT_EQ(ChooseByMeasurement("test slow-vs-fast", candidates), 1);
  EXPECT_EQ(built, 1);  // the second call looked the winner up
  const auto choices = KernelChoices();
  const KernelChoice* c = Find(choices, "test slow-vs-fast");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->names, (std::vector<std::string>{"slow", "fast"}));
  EXPECT_GE(c->best_us[0], 2000.0);
  EXPECT_LT(c->best_us[1], c->best_us[0]);
  EXPECT_GT(c->measure_us, 3 * 2000.0);  // at least three timed rounds of the slow one
}

TEST(KernelChoiceTest, ACandidateThatThrowsNeverWins) {
  auto candidates = [] {
    return std::vector<KernelCandidate>{{"throws", [] { throw std::runtime_error("rejects these operands"); }},
                                        {"works", [] { Sleep(100); }}};
  };
  EXPECT_EQ(ChooseByMeasurement("test throwing", candidates), 1);
}

TEST(KernelChoiceTest, ASingleCandidateIsNotTimedOrRecorded) {
  auto one = [] { return std::vector<KernelCandidate>{{"only", [] { Sleep(100); }}}; };
  EXPECT_EQ(ChooseByMeasurement("test single", one), 0);
  const auto choices = KernelChoices();
  EXPECT_EQ(Find(choices, "test single"), nullptr);
}

}  // namespace
}  // namespace ge::cpu
