// Sink executor (static shapes): every task is bound once per DeviceProgram; a run binds the
// caller's inputs and fresh output tensors, then replays the task list. Profiling and data
// dumps (RunDebugOptions) switch to an instrumented loop; plain runs pay one branch for them.
//
// A model with several streams replays either on its streams (StreamRunner) or as one stream in
// task order (also valid for its memory plan). Which is faster depends on the machine and the
// sizes, so with ge.exec.streamReplay=auto the first runs alternate between the two and the
// faster median is kept; "always" keeps the streams.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "ge/runtime/device.h"
#include "ge/runtime/run_debug.h"
#include "ge/runtime/stream_runner.h"

namespace ge {

class SinkExecutor {
 public:
  enum class StreamReplay : uint8_t { kAuto, kAlways };
  SinkExecutor(std::shared_ptr<const Model> model, std::shared_ptr<Device> device, RunDebugOptions debug = {},
               StreamReplay replay = StreamReplay::kAuto);

  // Thread-safe: concurrent runs each take a DeviceProgram from the pool.
  Status Run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs);
  // Instantiates one program up front so that load errors surface at compile time.
  Status Warmup();
  const Model& model() const { return *model_; }
  // Profiled runs so far (emptied by the call); nullopt-like empty when profiling is off.
  std::vector<RunProfile> TakeProfile(uint64_t* dropped) { return profile_.Take(dropped); }
  bool profiling() const { return debug_.profiling; }
  // "single" (one stream), "timing" (auto, still deciding), "streams" or "task_order".
  std::string StreamMode() const;

 private:
  // A program and the stream threads that replay it (made when first needed).
  struct Slot {
    std::unique_ptr<DeviceProgram> program;
    std::unique_ptr<StreamRunner> runner;
  };
  enum class Mode : uint8_t { kSingle, kTiming, kStreams, kTaskOrder };
  static constexpr int kTimedRuns = 16;  // alternating, 8 each way

  bool UseStreams(uint64_t run) const;
  void RecordTiming(bool streams, int64_t ns);
  Status Launch(Slot& slot, bool streams);
  Status WithTaskContext(Status status, size_t task) const;
  Status CheckInputs(const std::vector<Tensor>& inputs) const;
  Status MakeOutputs(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) const;
  Status LaunchInstrumented(Slot& slot, bool streams);
  Status RunTaskInstrumented(DeviceProgram& program, size_t index, RunProfile* run, const std::string& step_dir);
  Expected<Slot> Acquire();
  void Release(Slot slot);

  std::shared_ptr<const Model> model_;
  std::shared_ptr<Device> device_;
  RunDebugOptions debug_;
  std::unique_ptr<DataDumper> dumper_;  // set when data dumps are on
  ProfileLog profile_;
  std::atomic<uint64_t> step_{0};
  std::atomic<uint64_t> runs_{0};
  std::atomic<Mode> mode_{Mode::kSingle};
  std::mutex timing_mu_;
  std::vector<int64_t> timed_[2];  // run times in task order [0] and on streams [1]
  std::mutex pool_mu_;
  std::vector<Slot> pool_;
};

}  // namespace ge
