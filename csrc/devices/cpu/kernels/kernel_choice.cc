#include "devices/cpu/kernels/kernel_choice.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <c10/core/InferenceMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ge/base/fingerprint.h"
#include "ge/base/logging.h"
#include "ge/base/options.h"
#include "ge/serialize/trusted_dir.h"

namespace ge::cpu {
namespace {

// Enough rounds for a stable minimum on a noisy machine, within a bounded cost: rounds are
// added while they fit in the budget (a 20 ms product is timed 3 times, a 20 us one 20 times).
constexpr int kMinRounds = 3;
constexpr int kMaxRounds = 20;
constexpr double kBudgetUs = 20000;

// The revision of the candidates' implementations, part of the store's file name: a decision
// is only as good as the code it timed, so changing how a candidate runs (2: the oneDNN
// candidates moved from ATen's operators, which allocated and copied their output, to the
// engine's own primitives; 3: the few-row product streams one weight row at a time, every
// candidate is timed on evicted weights, and a weight that is an input is repacked on a digest;
// 4: convolutions with few output pixels gain the few_pixels candidate; 5: and the
// few_pixels_unpacked one; 6: products of up to 256 rows the onednn_transposed one; 7: attention
// with few query rows per key/value head the decode_flash one; 8: products with a few output
// columns the few_columns one; 9: products of a few rows the gemv_interleaved one, and gemv's
// accumulators in registers; 10: products of 5 to 8 rows the gemv walks too) bumps it and every
// key is timed again.
constexpr int kCandidatesRevision = 10;

struct Registry {
  std::mutex mutex;
  std::map<std::string, int> winners;  // "key [names]" -> index of the winner among names
  std::vector<KernelChoice> choices;
  std::string store_path;                     // the file `stored` was read from
  std::map<std::string, std::string> stored;  // key -> winner's name, from earlier processes
};

// Where decisions are stored: one file per kind of CPU in the kernel cache (the same
// directory generated kernels use: ge.kernelCacheDir's environment variable or the default).
// Empty when that directory is not trusted (trusted_dir.h): decisions then live only in this
// process (the kernel compiler warns about the directory).
std::string StorePath() {
  auto options = WithEnvironment({});
  if (!options.ok()) return "";
  TrustOptions trust;
  if (auto links = BoolOption(*options, option::kKernelCacheAllowSymlinks); links.ok()) trust.allow_symlinks = *links;
  const std::string dir = KernelCacheDir(*options);
  auto root = MakeTrustedDir(dir, {"kernel_choices"}, trust);
  if (!root.ok()) return "";
  return fmt::format("{}/kernel_choices/{}-r{}.tsv", *root, Fingerprint(HostCpuIdentity()), kCandidatesRevision);
}

// Lines of `key<TAB>winner`; the file is the user's own (mode 0600 in a 0700 directory), but a
// torn or edited line is skipped, never trusted: a stored winner counts only if it names a
// candidate of the key.
std::map<std::string, std::string> ReadStore(const std::string& path) {
  std::map<std::string, std::string> stored;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos || tab == 0 || line.find('\t', tab + 1) != std::string::npos) continue;
    stored[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return stored;
}

// Appends one decision (one write of one short line with O_APPEND: processes appending at the
// same time do not interleave within it). Best effort: a cache that cannot be written only
// means the next process times again.
void Store(const std::string& path, const std::string& key, const std::string& winner) {
  if (key.find_first_of("\t\n") != std::string::npos || winner.find_first_of("\t\n") != std::string::npos) return;
  if (path.empty()) return;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const std::string line = key + "\t" + winner + "\n";
  if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    GE_LOGW("could not store a kernel choice in {}", path);
  ::close(fd);
}

Registry& TheRegistry() {
  static Registry* registry = new Registry();  // never destroyed: kernels may load at exit
  return *registry;
}

// A candidate that throws (an operator that rejects these operands) is never the winner.
double TimeUs(const KernelCandidate& candidate) {
  EvictFromCaches(candidate.cold);
  const auto start = std::chrono::steady_clock::now();
  try {
    candidate.run();
  } catch (const std::exception& e) {
    GE_LOGD("kernel candidate '{}' failed on scratch operands: {}", candidate.name, e.what());
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
    const double warm_up = TimeUs(c);  // first-touch allocations, oneDNN primitive creation
    if (std::isfinite(warm_up)) round_us += warm_up;
  }
  const int rounds = std::clamp(static_cast<int>(kBudgetUs / std::max(round_us, 1.0)), kMinRounds, kMaxRounds);
  // Interleaved, so that drift of the machine hits every candidate alike; the minimum is the
  // time the code needs when nothing interferes.
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < candidates.size(); ++i)
      choice.best_us[i] = std::min(choice.best_us[i], TimeUs(candidates[i]));
  choice.winner =
      static_cast<int>(std::min_element(choice.best_us.begin(), choice.best_us.end()) - choice.best_us.begin());
  choice.measure_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  return choice;
}

// Only a clear win outlives the process: within 10% the order can flip with the machine's load
// (a decision stored while the machine was busy would stay wrong), and a close race costs little
// to run again.
bool Decisive(const KernelChoice& choice) {
  const double best = choice.best_us[static_cast<size_t>(choice.winner)];
  double second = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < choice.best_us.size(); ++i)
    if (static_cast<int>(i) != choice.winner) second = std::min(second, choice.best_us[i]);
  return std::isfinite(best) && best * 1.1 <= second;
}

}  // namespace

std::vector<MemoryRange> MemoryOf(std::initializer_list<at::Tensor> tensors) {
  std::vector<MemoryRange> ranges;
  for (const at::Tensor& t : tensors)
    if (t.defined()) ranges.push_back({t.const_data_ptr(), t.nbytes()});
  return ranges;
}

// clflush is in every x86-64 CPU; elsewhere nothing is evicted and candidates are timed on
// whatever the caches hold.
void EvictFromCaches(const std::vector<MemoryRange>& ranges) {
#if defined(__x86_64__)
  constexpr uintptr_t kLine = 64;
  for (const MemoryRange& r : ranges) {
    const uintptr_t begin = reinterpret_cast<uintptr_t>(r.data) & ~(kLine - 1);
    const uintptr_t end = reinterpret_cast<uintptr_t>(r.data) + r.bytes;
    for (uintptr_t line = begin; line < end; line += kLine) _mm_clflush(reinterpret_cast<const void*>(line));
  }
  _mm_mfence();
#else
  (void)ranges;
#endif
}

std::string SizeInKey(int64_t size, bool size_class, int64_t exact_up_to) {
  if (!size_class || size <= exact_up_to) return std::to_string(size);
  uint64_t high = 1;
  while (high < static_cast<uint64_t>(size)) high <<= 1U;
  return fmt::format("({}..{}]", high / 2, high);
}

std::function<void()> FastestByMeasurement(const std::string& key, std::vector<KernelCandidate> kernels,
                                           const std::function<std::vector<KernelCandidate>()>& timed) {
  std::vector<std::string> names;
  for (const KernelCandidate& k : kernels) names.push_back(k.name);
  // Candidates are timed as a task runs: the compiling frontend (AOT autograd) may have Python
  // modes and the Python dispatcher on, which would route every ATen call of a candidate through
  // Python (and fail on the pool's threads, which have no Python dispatcher state).
  c10::InferenceMode inference;
  c10::impl::ExcludeDispatchKeyGuard no_python(c10::DispatchKeySet(
      {c10::DispatchKey::Python, c10::DispatchKey::PythonTLSSnapshot, c10::DispatchKey::PythonDispatcher}));
  return std::move(kernels[static_cast<size_t>(ChooseByMeasurement(key, names, timed))].run);
}

int ChooseByMeasurement(const std::string& key, const std::vector<std::string>& names,
                        const std::function<std::vector<KernelCandidate>()>& make_candidates) {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  // Decided under the key and the candidates' names: the same shapes can offer another set
  // (a kernel that does not apply there, or a new build's kernel), and an index into one set
  // means nothing in another -- nor does a race the other set's kernels did not run in.
  const std::string choice_key = fmt::format("{} [{}]", key, fmt::join(names, ","));
  auto it = registry.winners.find(choice_key);
  if (it != registry.winners.end()) return it->second;
  // The cache directory in effect now (a process may point TORCHAIR_GE_CACHE_DIR elsewhere).
  if (std::string path = StorePath(); path != registry.store_path) {
    registry.stored = ReadStore(path);
    registry.store_path = std::move(path);
  }
  if (auto stored = registry.stored.find(choice_key); stored != registry.stored.end()) {
    auto at = std::find(names.begin(), names.end(), stored->second);
    if (at != names.end()) {
      KernelChoice choice{key, names, std::vector<double>(names.size(), 0), static_cast<int>(at - names.begin()),
                          0,   true};
      registry.winners.emplace(choice_key, choice.winner);
      registry.choices.push_back(std::move(choice));
      return registry.choices.back().winner;
    }
  }
  const std::vector<KernelCandidate> candidates = make_candidates();
  if (candidates.size() < 2) return 0;  // nothing to choose: not recorded, asked again next time
  std::vector<std::string> timed_names;
  for (const KernelCandidate& c : candidates) timed_names.push_back(c.name);
  if (timed_names != names) {  // the winner's index would name another kernel: keep the first
    GE_LOGE("kernel choice for '{}': the timed candidates [{}] are not the task's [{}]; running {}", key,
            fmt::join(timed_names, ","), fmt::join(names, ","), names.front());
    return 0;
  }
  KernelChoice choice = Measure(key, candidates);
  registry.winners.emplace(choice_key, choice.winner);
  if (Decisive(choice)) Store(registry.store_path, choice_key, choice.names[static_cast<size_t>(choice.winner)]);
  registry.choices.push_back(std::move(choice));
  return registry.choices.back().winner;
}

Expected<std::string> ForcedKernelSetting(const char* variable, const std::vector<std::string>& forced) {
  const char* value = std::getenv(variable);
  const std::string setting = value != nullptr && *value != '\0' ? value : "measure";
  if (setting != "measure" && std::find(forced.begin(), forced.end(), setting) == forced.end())
    return InvalidArgument("{}='{}': expected one of measure, {}", variable, setting, fmt::join(forced, ", "));
  return setting;
}

std::function<void()> CandidateNamed(std::vector<KernelCandidate> candidates, const std::string& name) {
  for (auto& candidate : candidates)
    if (candidate.name == name) return std::move(candidate.run);
  return std::move(candidates.front().run);
}

void ForgetKernelChoicesForTesting() {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.winners.clear();
  registry.stored.clear();
  registry.store_path.clear();
}

std::vector<KernelChoice> KernelChoices() {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return registry.choices;
}

}  // namespace ge::cpu
