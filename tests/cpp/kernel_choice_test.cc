// Kernels chosen by measurement: the faster candidate wins, a key is timed once per process and
// then stored for later processes on this kind of CPU, a candidate that throws never wins, and
// every decision is recorded.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "devices/cpu/kernels/kernel_choice.h"

namespace ge::cpu {
namespace {

// Each test decides in a cache of its own (the store is read again after a Forget).
class KernelChoiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ge_kernel_choice_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    const char* old = std::getenv("TORCHAIR_GE_CACHE_DIR");
    if (old != nullptr) saved_ = old;
    had_ = old != nullptr;
    ::setenv("TORCHAIR_GE_CACHE_DIR", dir_.c_str(), 1);
    ForgetKernelChoicesForTesting();
  }
  void TearDown() override {
    if (had_)
      ::setenv("TORCHAIR_GE_CACHE_DIR", saved_.c_str(), 1);
    else
      ::unsetenv("TORCHAIR_GE_CACHE_DIR");
    ForgetKernelChoicesForTesting();
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
  std::string saved_;
  bool had_ = false;
};

void Sleep(int us) { std::this_thread::sleep_for(std::chrono::microseconds(us)); }

// Busy for `us` microseconds: unlike a sleep (whose wake-up lateness varies by tens of
// microseconds), its best time over the rounds is `us` to within a microsecond.
void Spin(int us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

const KernelChoice* Find(const std::vector<KernelChoice>& choices, const std::string& key) {
  for (const KernelChoice& c : choices)
    if (c.key == key) return &c;
  return nullptr;
}

TEST_F(KernelChoiceTest, TheFasterCandidateWinsAndIsRemembered) {
  int built = 0;
  auto candidates = [&built]() {
    ++built;
    return std::vector<KernelCandidate>{{"slow", [] { Sleep(2000); }}, {"fast", [] {}}};
  };
  EXPECT_EQ(ChooseByMeasurement("test slow-vs-fast", {"slow", "fast"}, candidates), 1);
  EXPECT_EQ(ChooseByMeasurement("test slow-vs-fast", {"slow", "fast"}, candidates), 1);
  EXPECT_EQ(built, 1);  // the second call looked the winner up
  const auto choices = KernelChoices();
  const KernelChoice* c = Find(choices, "test slow-vs-fast");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->names, (std::vector<std::string>{"slow", "fast"}));
  EXPECT_GE(c->best_us[0], 2000.0);
  EXPECT_LT(c->best_us[1], c->best_us[0]);
  EXPECT_GT(c->measure_us, 3 * 2000.0);  // at least three timed rounds of the slow one
}

TEST_F(KernelChoiceTest, ACandidateThatThrowsNeverWins) {
  auto candidates = [] {
    return std::vector<KernelCandidate>{{"throws", [] { throw std::runtime_error("rejects these operands"); }},
                                        {"works", [] { Sleep(100); }}};
  };
  EXPECT_EQ(ChooseByMeasurement("test throwing", {"throws", "works"}, candidates), 1);
}

TEST_F(KernelChoiceTest, ASingleCandidateIsNotTimedOrRecorded) {
  auto one = [] { return std::vector<KernelCandidate>{{"only", [] { Sleep(100); }}}; };
  EXPECT_EQ(ChooseByMeasurement("test single", {"only"}, one), 0);
  const auto choices = KernelChoices();
  EXPECT_EQ(Find(choices, "test single"), nullptr);
}

// The same shapes can offer fewer kernels (a product with a transposed x1 has only MKL; a
// convolution inside a fused kernel only its channels-last form): the decision made among more
// must not be applied to them -- an index into the other set would run past the end.
TEST_F(KernelChoiceTest, AKeyOfferingAnotherSetOfCandidatesIsDecidedOnItsOwn) {
  auto two = [] { return std::vector<KernelCandidate>{{"slow", [] { Sleep(2000); }}, {"fast", [] {}}}; };
  auto one = [] { return std::vector<KernelCandidate>{{"slow", [] { Sleep(2000); }}}; };
  EXPECT_EQ(ChooseByMeasurement("test subset", {"slow", "fast"}, two), 1);
  EXPECT_EQ(ChooseByMeasurement("test subset", {"slow"}, one), 0);
  EXPECT_EQ(ChooseByMeasurement("test subset", {"slow", "fast"}, two), 1);
}

// The timed candidates must be the task's, in its order: a winner's index among others would run
// another kernel than the one timed (a convolution's scratch once built one candidate fewer).
TEST_F(KernelChoiceTest, TimedCandidatesThatAreNotTheTasksDecideNothing) {
  auto fewer = [] { return std::vector<KernelCandidate>{{"slow", [] { Sleep(2000); }}, {"fast", [] {}}}; };
  auto reordered = [] {
    return std::vector<KernelCandidate>{{"fast", [] {}}, {"slow", [] { Sleep(2000); }}, {"new", [] {}}};
  };
  EXPECT_EQ(ChooseByMeasurement("test mismatch", {"slow", "fast", "new"}, fewer), 0);
  EXPECT_EQ(ChooseByMeasurement("test mismatch", {"slow", "fast", "new"}, reordered), 0);
  const auto choices = KernelChoices();
  EXPECT_EQ(Find(choices, "test mismatch"), nullptr);  // nothing recorded or stored
}

TEST_F(KernelChoiceTest, ALaterProcessStartsWithTheStoredWinner) {
  auto candidates = [] { return std::vector<KernelCandidate>{{"slow", [] { Sleep(2000); }}, {"fast", [] {}}}; };
  EXPECT_EQ(ChooseByMeasurement("test stored", {"slow", "fast"}, candidates), 1);
  ForgetKernelChoicesForTesting();  // as a new process: only the file remembers
  int built = 0;
  auto never = [&built] {
    ++built;
    return std::vector<KernelCandidate>{{"slow", [] {}}, {"fast", [] {}}};
  };
  EXPECT_EQ(ChooseByMeasurement("test stored", {"slow", "fast"}, never), 1);
  EXPECT_EQ(built, 0);  // not timed again
  const auto choices = KernelChoices();
  EXPECT_TRUE(choices.back().key == "test stored" && choices.back().from_disk);
  // A stored winner that is not a candidate of the key (an older build's names) is timed again.
  EXPECT_EQ(ChooseByMeasurement("test renamed", {"a", "b"},
                                [] {
                                  return std::vector<KernelCandidate>{{"a", [] { Sleep(2000); }}, {"b", [] {}}};
                                }),
            1);
  ForgetKernelChoicesForTesting();
  EXPECT_EQ(ChooseByMeasurement("test renamed", {"c", "d"},
                                [&built] {
                                  ++built;
                                  return std::vector<KernelCandidate>{{"c", [] {}}, {"d", [] { Sleep(2000); }}};
                                }),
            0);
  EXPECT_EQ(built, 1);
}

TEST_F(KernelChoiceTest, ACloseRaceIsTimedAgainByTheNextProcess) {
  int built = 0;
  auto even = [&built] {
    ++built;
    return std::vector<KernelCandidate>{{"a", [] { Spin(300); }}, {"b", [] { Spin(300); }}};
  };
  ChooseByMeasurement("test close", {"a", "b"}, even);
  ForgetKernelChoicesForTesting();
  ChooseByMeasurement("test close", {"a", "b"}, even);
  EXPECT_EQ(built, 2);  // nothing stored: within 10% either could win on another run
}

TEST_F(KernelChoiceTest, TornOrEditedLinesInTheStoreAreSkipped) {
  std::vector<std::filesystem::path> files;
  ChooseByMeasurement("test torn", {"slow", "fast"}, [] {
    return std::vector<KernelCandidate>{{"slow", [] { Sleep(2000); }}, {"fast", [] {}}};
  });
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir_))
    if (f.path().extension() == ".tsv") files.push_back(f.path());
  ASSERT_EQ(files.size(), 1u);
  std::ofstream(files[0], std::ios::trunc) << "test torn\n\tfast\ntest torn\tfast\textra\ngarbage without tabs\n";
  ForgetKernelChoicesForTesting();
  int built = 0;
  EXPECT_EQ(ChooseByMeasurement("test torn", {"slow", "fast"},
                                [&built] {
                                  ++built;
                                  return std::vector<KernelCandidate>{{"slow", [] { Sleep(2000); }}, {"fast", [] {}}};
                                }),
            1);
  EXPECT_EQ(built, 1);  // nothing usable was stored: timed
}

// A weight a candidate lists as cold is read from memory in every timed call: two candidates
// walking the same 256 KiB (within any x86 server's L2), one listing it as cold, the other not --
// the second runs right after the first and finds it cached, so it wins. The walk follows a
// random cycle through the buffer's cache lines, one load waiting for the last: the hardware
// prefetchers cannot guess it, so each line costs a memory latency when evicted (~100 ns) and a
// cache latency when not (~5 ns) -- a gap far beyond the machine's noise (a streaming read was
// only 1.1-1.6x apart, too close for a CI machine running tests side by side).
TEST_F(KernelChoiceTest, ColdOperandsAreReadFromMemoryInEveryTimedCall) {
  constexpr size_t kLine = 64 / sizeof(uint64_t), kLines = (256 << 10) / 64;
  std::vector<size_t> order(kLines);
  for (size_t i = 0; i < kLines; ++i) order[i] = i;
  std::shuffle(order.begin() + 1, order.end(), std::mt19937_64(7));
  std::vector<uint64_t> weight(kLines * kLine, 0);  // the first word of each line: the next line
  for (size_t i = 0; i < kLines; ++i) weight[order[i] * kLine] = order[(i + 1) % kLines];
  volatile uint64_t sink = 0;
  auto walk = [&] {
    uint64_t line = 0;
    for (size_t i = 0; i < kLines; ++i) line = weight[line * kLine];
    sink = line;
  };
  const std::vector<MemoryRange> cold{{weight.data(), weight.size() * sizeof(uint64_t)}};
  ChooseByMeasurement("test cold", {"cold", "cached"}, [&] {
    return std::vector<KernelCandidate>{{"cold", walk, cold}, {"cached", walk}};
  });
  const std::vector<KernelChoice> choices = KernelChoices();
  const KernelChoice* choice = Find(choices, "test cold");
  ASSERT_NE(choice, nullptr);
  EXPECT_EQ(choice->winner, 1);
  EXPECT_GT(choice->best_us[0], 3 * choice->best_us[1]) << choice->best_us[0] << " vs " << choice->best_us[1];
}

}  // namespace
}  // namespace ge::cpu
