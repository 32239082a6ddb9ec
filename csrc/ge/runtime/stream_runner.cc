#include "ge/runtime/stream_runner.h"

#include <pthread.h>

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define GE_CPU_RELAX() _mm_pause()
#else
#define GE_CPU_RELAX() std::this_thread::yield()
#endif

namespace ge {
namespace {

// Spin this long before sleeping: a wake-up through the kernel costs tens of microseconds.
constexpr auto kSpin = std::chrono::microseconds(50);

// Counts the fork()s this process is a child of (pthread_atfork, registered once).
std::atomic<uint64_t> g_fork_generation{0};
[[maybe_unused]] const bool g_fork_handler = [] {
  pthread_atfork(nullptr, nullptr, [] { g_fork_generation.fetch_add(1); });
  return true;
}();

template <typename Ready>
bool SpinUntil(const Ready& ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (ready()) return true;
    GE_CPU_RELAX();
    if ((i & 255) == 255 && std::chrono::steady_clock::now() > deadline) return false;
  }
}

}  // namespace

bool StreamRunner::MadeInThisProcess() const { return fork_generation_ == g_fork_generation.load(); }

StreamRunner::StreamRunner(const StreamProgram& program, Device& device)
    : fork_generation_(g_fork_generation.load()), program_(program), device_(device) {
  events_.reset(new std::atomic<uint64_t>[static_cast<size_t>(std::max(program.num_events, 1))]);
  for (int32_t e = 0; e < std::max(program.num_events, 1); ++e) events_[static_cast<size_t>(e)].store(0);
  int compute = 0;
  for (const std::string& name : program.names) compute += name != "communication";
  const int total = std::max(device.IntraOpThreads(), 1);
  for (const std::string& name : program.names)
    threads_.push_back(name == "communication" ? 1 : std::max(1, total / std::max(compute, 1)));
  for (size_t s = 1; s < program.streams.size(); ++s) workers_.emplace_back([this, s] { WorkerLoop(s); });
}

StreamRunner::~StreamRunner() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

// Compute streams share the intra-op threads evenly, for the whole run: a stream that has the
// cores to itself for a while still keeps its share, because an OpenMP team left behind by a
// wider share keeps spinning on a core after its region (measured: a 360 us stall on a 2-core
// machine when a stream widened to both cores for one task). The communication stream mostly
// waits on the network and gets one thread.
int StreamRunner::ThreadsFor(size_t stream) const { return threads_[stream]; }

void StreamRunner::WorkerLoop(size_t stream) {
  device_.SetThreadParallelism(ThreadsFor(stream));
  uint64_t seen = 0;
  for (;;) {
    if (!SpinUntil([&] { return generation_.load(std::memory_order_acquire) != seen; })) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || generation_.load(std::memory_order_acquire) != seen; });
      if (stop_) return;
    }
    seen = generation_.load(std::memory_order_acquire);
    Status status = RunStream(stream, seen);
    if (!status.ok()) Fail(std::move(status));
    if (running_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mu_);  // the caller may be asleep waiting for the last worker
      cv_.notify_all();
    }
  }
}

Status StreamRunner::Run(const RunTask& run_task) {
  run_task_ = &run_task;
  failed_.store(false);
  error_ = Status();
  running_.store(static_cast<int>(workers_.size()), std::memory_order_release);
  const uint64_t generation = generation_.load() + 1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    generation_.store(generation, std::memory_order_release);
  }
  cv_.notify_all();
  const int caller_threads = device_.SetThreadParallelism(ThreadsFor(0));
  Status status = RunStream(0, generation);
  device_.SetThreadParallelism(caller_threads);
  if (!status.ok()) Fail(std::move(status));
  if (!SpinUntil([&] { return running_.load(std::memory_order_acquire) == 0; })) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return running_.load(std::memory_order_acquire) == 0; });
  }
  run_task_ = nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

Status StreamRunner::RunStream(size_t stream, uint64_t generation) {
  for (const StreamStep& step : program_.streams[stream]) {
    switch (step.kind) {
      case StreamStep::Kind::kWait:
        if (!Wait(step.index, generation)) return {};  // another stream failed; it reports
        break;
      case StreamStep::Kind::kRun:
        if (failed_.load(std::memory_order_relaxed)) return {};
        GE_RETURN_IF_ERROR((*run_task_)(static_cast<size_t>(step.index)));
        break;
      case StreamStep::Kind::kRecord: Record(step.index, generation); break;
    }
  }
  return {};
}

bool StreamRunner::Wait(int32_t event, uint64_t generation) {
  std::atomic<uint64_t>& e = events_[static_cast<size_t>(event)];
  auto ready = [&] { return e.load(std::memory_order_acquire) >= generation || failed_.load(); };
  if (!SpinUntil(ready)) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, ready);
  }
  return !failed_.load();
}

void StreamRunner::Record(int32_t event, uint64_t generation) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    events_[static_cast<size_t>(event)].store(generation, std::memory_order_release);
  }
  cv_.notify_all();
}

void StreamRunner::Fail(Status status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_.ok()) error_ = std::move(status);
    failed_.store(true);
  }
  cv_.notify_all();
}

}  // namespace ge
