// Sink executor (static shapes): every task is bound once per DeviceProgram; a run binds the
// caller's inputs and fresh output tensors, then replays the task list. Profiling and data
// dumps (RunDebugOptions) switch to an instrumented loop; plain runs pay one branch for them.
//
// A model with several streams replays either on its streams (StreamRunner) or as one stream in
// task order (also valid for its memory plan). Which is faster depends on the machine and the
// sizes, so with ge.exec.streamReplay=auto the first runs alternate between the two and the
// streams are kept when they clearly win (kStreamsMustSave); "always" keeps the streams.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "ge/runtime/device.h"
#include "ge/runtime/run_debug.h"
#include "ge/runtime/stream_runner.h"

namespace ge {

// With ge.exec.streamReplay=auto: runs alternate between the streams and the task order until
// each way has run this many times.
inline constexpr size_t kStreamReplayPairs = 12;
// The streams are kept only when they take at most this share of the task order's time. Where
// the two are closer, the load of the moment decides: a neighbour that takes a core slows a
// two-thread team's every op and one-thread streams less, and the task order, which gives every
// op all the intra-op threads, wins again once the machine is quiet (a batch-1 ResNet on a
// 2-core Zen 4: streams picked in a busy moment ran 1.34x slower after).
inline constexpr double kStreamsMustSave = 0.9;
// The timing stops early, for the task order, when the streams were no faster in any of this many
// pairs (after the first): streams that cannot win cost every second run while the timing lasts
// (a training step of a batch-8 ResNet ran 1.5x slower on its streams, and a training loop of a
// few dozen steps spent all of them timing). A load of the moment favours the streams, so it
// cannot make hopeless streams look better; one pair the streams win and the timing goes on.
inline constexpr size_t kHopelessStreamPairs = 4;
// And after two pairs (after the first) when the streams were at least this much slower in both:
// a graph run once per request pays every streams run while the timing lasts (a LLaMA prefill of
// 900 tokens, once per generate(), ran in 227 ms on its streams and 119 in task order, and
// generate() took five calls to get past the timing).
inline constexpr size_t kClearlySlowerStreamPairs = 2;
inline constexpr double kClearlySlowerStreams = 1.25;

struct StreamReplayVerdict {
  bool streams = false;  // keep the streams (else the task order)
  double ratio = 1;      // streams / task order: the median over adjacent pairs of runs
  size_t pairs = 0;      // pairs the median is over
};
// The verdict once both ways have kStreamReplayPairs run times (in run order), or earlier when
// the streams are hopeless (kHopelessStreamPairs, kClearlySlowerStreamPairs), else nullopt.
std::optional<StreamReplayVerdict> JudgeStreamReplay(const std::vector<int64_t>& task_order_ns,
                                                     const std::vector<int64_t>& streams_ns);

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
