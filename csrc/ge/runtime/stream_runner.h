// Several streams on a host: stream 0 runs on the caller's thread, every other stream on a
// worker thread of its own, each replaying its steps (StreamProgram) in order. Events are
// counters: a run has a generation number, recording event e stores it, and a wait returns
// once e holds the run's generation -- spinning briefly (a branch is often microseconds
// away), then sleeping on a condition variable. A failed task stops the run on every stream:
// waits return early and the first error is reported.
//
// Intra-op threads are divided between the compute streams (the device's SetThreadParallelism
// on each stream's thread) so that streams side by side do not oversubscribe the cores; the
// caller's own setting is put back after each run.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ge/runtime/device.h"

namespace ge {

class StreamRunner {
 public:
  // Runs task `index` (plain or instrumented); called on the thread of the task's stream.
  using RunTask = std::function<Status(size_t index)>;

  StreamRunner(const StreamProgram& program, Device& device);
  ~StreamRunner();
  StreamRunner(const StreamRunner&) = delete;
  StreamRunner& operator=(const StreamRunner&) = delete;

  // One run over every stream; returns when all have finished. Not reentrant: one run at a time.
  Status Run(const RunTask& run_task);
  // fork() copies no threads: in a child, a runner made before the fork has no workers and
  // must be neither used nor destroyed (joining threads that are not there); make a new one.
  bool MadeInThisProcess() const;

 private:
  void WorkerLoop(size_t stream);
  Status RunStream(size_t stream, uint64_t generation);
  bool Wait(int32_t event, uint64_t generation);
  void Record(int32_t event, uint64_t generation);
  void Fail(Status status);
  int ThreadsFor(size_t stream) const;

  uint64_t fork_generation_ = 0;
  const StreamProgram& program_;
  Device& device_;
  std::vector<int> threads_;          // per stream: its share of the intra-op threads (ThreadsFor)
  std::vector<std::thread> workers_;  // streams 1..n-1
  std::unique_ptr<std::atomic<uint64_t>[]> events_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> running_{0};  // workers still in the current run
  std::atomic<bool> failed_{false};
  const RunTask* run_task_ = nullptr;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  Status error_;
};

}  // namespace ge
