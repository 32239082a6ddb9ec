#include "devices/cpu/kernels/kernel_choice.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>

namespace ge::cpu {
namespace {

// Enough rounds for a stable minimum on a noisy machine, within a bounded cost: rounds are
// added while they fit in the budget (a 20 ms product is timed 3 times, a 20 us one 20 times).
constexpr int kMinRounds = 3;
constexpr int kMaxRounds = 20;
constexpr double kBudgetUs = 20000;

struct Registry {
  std::mutex mutex;
  std::map<std::string, int> winners;
  std::vector<KernelChoice> choices;
};

Registry& TheRegistry() {
  static Registry* registry = new Registry();  // never destroyed: kernels may load at exit
  return *registry;
}

// A candidate that throws (an operator that rejects these operands) is never the winner.
double TimeUs(const std::function<void()>& run) {
  const auto start = std::chrono::steady_clock::now();
  try {
    run();
  } catch (const std::exception&) {
    return std::numeric_limits<double>::infinity();
  }
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

KernelChoice Measure(const std::string& key, const std::vector<KernelCandidate>& candidates) {
  KernelChoice choice{key, {}, std::vector<double>(candidates.size(), std::numeric_limits<double>::infinity()), 0, 0};
  const auto start = std::chrono::steady_clock::now();
  double round_us = 0;
  for (const KernelCandidate& c : candidates) {
    choice.names.push_back(c.name);
    const double warm_up = TimeUs(c.run);  // first-touch allocations, oneDNN primitive creation
    if (std::isfinite(warm_up)) round_us += warm_up;
  }
  const int rounds = std::clamp(static_cast<int>(kBudgetUs / std::max(round_us, 1.0)), kMinRounds, kMaxRounds);
  // Interleaved, so that drift of the machine hits every candidate alike; the minimum is the
  // time the code needs when nothing interferes.
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < candidates.size(); ++i)
      choice.best_us[i] = std::min(choice.best_us[i], TimeUs(candidates[i].run));
  choice.winner =
      static_cast<int>(std::min_element(choice.best_us.begin(), choice.best_us.end()) - choice.best_us.begin());
  choice.measure_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  return choice;
}

}  // namespace

int ChooseByMeasurement(const std::string& key, const std::function<std::vector<KernelCandidate>()>& make_candidates) {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.winners.find(key);
  if (it != registry.winners.end()) return it->second;
  const std::vector<KernelCandidate> candidates = make_candidates();
  if (candidates.size() < 2) return 0;  // nothing to choose: not recorded, asked again next time
  KernelChoice choice = Measure(key, candidates);
  registry.winners.emplace(key, choice.winner);
  registry.choices.push_back(std::move(choice));
  return registry.choices.back().winner;
}

std::vector<KernelChoice> KernelChoices() {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return registry.choices;
}

}  // namespace ge::cpu
