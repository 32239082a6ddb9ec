#include "ge/runtime/sink_executor.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "ge/base/logging.h"

namespace ge {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

SinkExecutor::SinkExecutor(std::shared_ptr<const Model> model, std::shared_ptr<Device> device, RunDebugOptions debug,
                           StreamReplay replay)
    : model_(std::move(model)), device_(std::move(device)), debug_(std::move(debug)) {
  if (model_->stream_program.multi()) mode_ = replay == StreamReplay::kAlways ? Mode::kStreams : Mode::kTiming;
}

std::string SinkExecutor::StreamMode() const {
  switch (mode_.load()) {
    case Mode::kSingle: return "single";
    case Mode::kTiming: return "timing";
    case Mode::kStreams: return "streams";
    case Mode::kTaskOrder: return "task_order";
  }
  return "?";
}

// While timing, odd runs use the streams and even runs the task order.
bool SinkExecutor::UseStreams(uint64_t run) const {
  const Mode mode = mode_.load(std::memory_order_relaxed);
  return mode == Mode::kStreams || (mode == Mode::kTiming && run % 2 == 1);
}

std::optional<StreamReplayVerdict> JudgeStreamReplay(const std::vector<int64_t>& task_order_ns,
                                                     const std::vector<int64_t>& streams_ns) {
  const size_t pairs = std::min(task_order_ns.size(), streams_ns.size());
  // Each streams run against the task-order run next to it: a neighbour's load that comes and
  // goes weighs on both sides of a pair. The first pair (each side's first run) is left out.
  auto ratio = [&](size_t i) {
    return static_cast<double>(streams_ns[i]) / static_cast<double>(std::max<int64_t>(task_order_ns[i], 1));
  };
  auto slower_in_every_pair = [&](double by) {
    bool slower = true;
    for (size_t i = 1; i < pairs && slower; ++i) slower = ratio(i) >= by;
    return slower;
  };
  const bool hopeless = (pairs > kHopelessStreamPairs && slower_in_every_pair(1.0)) ||
                        (pairs > kClearlySlowerStreamPairs && slower_in_every_pair(kClearlySlowerStreams));
  if (pairs < kStreamReplayPairs && !hopeless) return std::nullopt;  // (no allocation while undecided)
  std::vector<double> ratios;
  for (size_t i = 1; i < pairs; ++i) ratios.push_back(ratio(i));
  std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2), ratios.end());
  StreamReplayVerdict verdict;
  verdict.ratio = ratios[ratios.size() / 2];
  verdict.pairs = ratios.size();
  verdict.streams = verdict.ratio < kStreamsMustSave;
  return verdict;
}

void SinkExecutor::RecordTiming(bool streams, int64_t ns) {
  std::lock_guard<std::mutex> lock(timing_mu_);
  if (mode_.load() != Mode::kTiming) return;
  timed_[streams].push_back(ns);
  const std::optional<StreamReplayVerdict> verdict = JudgeStreamReplay(timed_[0], timed_[1]);
  if (!verdict) return;
  mode_ = verdict->streams ? Mode::kStreams : Mode::kTaskOrder;
  GE_LOGI("graph '{}': {} streams / task order {:.3f} (median of {} adjacent pairs): runs {}", model_->graph_name,
          model_->stream_program.streams.size(), verdict->ratio, verdict->pairs, StreamMode());
}

Status SinkExecutor::Warmup() {
  if (debug_.data_dump) {
    GE_ASSIGN_OR_RETURN(dumper_, DataDumper::Create(*model_, debug_));
  }
  GE_ASSIGN_OR_RETURN(Slot slot, Acquire());
  Release(std::move(slot));
  return {};
}

Expected<SinkExecutor::Slot> SinkExecutor::Acquire() {
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (!pool_.empty()) {
      Slot slot = std::move(pool_.back());
      pool_.pop_back();
      return slot;
    }
  }
  Slot slot;
  GE_ASSIGN_OR_RETURN(slot.program, device_->Instantiate(model_));
  return slot;
}

void SinkExecutor::Release(Slot slot) {
  std::lock_guard<std::mutex> lock(pool_mu_);
  pool_.push_back(std::move(slot));
}

Status SinkExecutor::CheckInputs(const std::vector<Tensor>& inputs) const {
  const auto& expected = model_->input_descs;
  GE_CHECK(inputs.size() == expected.size(), "graph '{}' takes {} inputs, {} given", model_->graph_name,
           expected.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorDesc& got = inputs[i].desc();
    GE_CHECK(got.dtype == expected[i].dtype, "graph '{}' input {}: expected dtype {}, got {}", model_->graph_name, i,
             DataTypeName(expected[i].dtype), DataTypeName(got.dtype));
    GE_CHECK(got.shape == expected[i].shape, "graph '{}' input {}: expected shape {}, got {}", model_->graph_name, i,
             ShapeToString(expected[i].shape), ShapeToString(got.shape));
    GE_CHECK(inputs[i].defined(), "graph '{}' input {} has no data", model_->graph_name, i);
  }
  return {};
}

Status SinkExecutor::MakeOutputs(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) const {
  const Model& m = *model_;
  outputs->assign(m.outputs.size(), Tensor());
  for (size_t k = 0; k < m.outputs.size(); ++k) {
    const OutputSource& src = m.outputs[k];
    switch (src.kind) {
      case OutputSource::Kind::kComputed: {
        GE_ASSIGN_OR_RETURN((*outputs)[k], device_->allocator().Allocate(m.output_descs[k]));
        break;
      }
      case OutputSource::Kind::kInput: (*outputs)[k] = inputs[static_cast<size_t>(src.index)]; break;
      case OutputSource::Kind::kConstant: {
        // A copy: the caller may write to what it gets back, the model's constant must not change.
        const Tensor& c = m.values[static_cast<size_t>(src.index)].constant;
        GE_ASSIGN_OR_RETURN((*outputs)[k], device_->allocator().Allocate(c.desc()));
        std::memcpy((*outputs)[k].data(), c.data(), static_cast<size_t>(c.nbytes()));
        break;
      }
      case OutputSource::Kind::kDuplicate: (*outputs)[k] = (*outputs)[static_cast<size_t>(src.index)]; break;
    }
  }
  return {};
}

Status SinkExecutor::Run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) {
  const bool event = LogEnabled(LogLevel::kEvent);
  const int64_t start = event ? NowNs() : 0;
  GE_RETURN_IF_ERROR(CheckInputs(inputs));
  GE_RETURN_IF_ERROR(MakeOutputs(inputs, outputs));
  const Model& m = *model_;
  GE_ASSIGN_OR_RETURN(Slot slot, Acquire());
  DeviceProgram& program = *slot.program;
  for (size_t i = 0; i < inputs.size(); ++i) program.BindIo(m.input_values[i], inputs[i].data());
  for (size_t k = 0; k < m.outputs.size(); ++k)
    if (m.outputs[k].kind == OutputSource::Kind::kComputed) program.BindIo(m.outputs[k].index, (*outputs)[k].data());

  const bool timing = mode_.load(std::memory_order_relaxed) == Mode::kTiming;
  const bool streams = UseStreams(runs_.fetch_add(1, std::memory_order_relaxed));
  if (slot.runner != nullptr && !slot.runner->MadeInThisProcess())
    (void)slot.runner.release();  // made before a fork: its threads are the parent's; abandon it
  if (streams && slot.runner == nullptr) slot.runner = std::make_unique<StreamRunner>(m.stream_program, *device_);
  // The streams lost: their threads are joined, and with them go any OpenMP teams a kernel
  // started on them. While GNU OpenMP manages more threads than there are cores it hardly spins
  // between parallel regions, so every region waits for a wake-up: a batch-1 ResNet-18 ran 1.45x
  // slower with a oneDNN primitive's team left on a stream thread (primitives are now planned
  // again for a stream's share of the threads, dnnl_util.h; ATen's per-thread setup and MKL keep
  // the share too, the CPU device's OpenMpThreads; other libraries may still start one).
  if (!streams && slot.runner != nullptr && mode_.load(std::memory_order_relaxed) == Mode::kTaskOrder)
    slot.runner.reset();
  const int64_t launch_start = timing ? NowNs() : 0;
  Status status = debug_.any() ? LaunchInstrumented(slot, streams) : Launch(slot, streams);
  if (timing && status.ok()) RecordTiming(streams, NowNs() - launch_start);
  Release(std::move(slot));
  if (!status.ok()) return status.WithContext(fmt::format("running graph '{}'", m.graph_name));
  if (event) GE_LOG_EVENT("graph '{}' run: {:.1f} us, {} tasks", m.graph_name, (NowNs() - start) / 1e3, m.tasks.size());
  return status;
}

Status SinkExecutor::WithTaskContext(Status status, size_t i) const {
  return status.WithContext(fmt::format("task {} ({} '{}')", i, model_->tasks[i].type, model_->tasks[i].name));
}

Status SinkExecutor::Launch(Slot& slot, bool streams) {
  auto& kernels = slot.program->kernels();
  if (streams) {
    return slot.runner->Run([&](size_t i) -> Status {
      Status status = kernels[i]->Launch();  // the task's name is formatted only for a failure
      return status.ok() ? status : WithTaskContext(std::move(status), i);
    });
  }
  for (auto& kernel : kernels) GE_RETURN_IF_ERROR(kernel->Launch());
  return {};
}

Status SinkExecutor::RunTaskInstrumented(DeviceProgram& program, size_t i, RunProfile* run,
                                         const std::string& step_dir) {
  const int64_t task_start = debug_.profiling ? NowNs() : 0;
  if (Status status = program.kernels()[i]->Launch(); !status.ok()) return WithTaskContext(std::move(status), i);
  if (debug_.profiling) run->tasks[i] = {task_start, NowNs()};
  if (dumper_ && dumper_->Selected(i)) GE_RETURN_IF_ERROR(dumper_->DumpTask(*model_, i, program, step_dir));
  return {};
}

Status SinkExecutor::LaunchInstrumented(Slot& slot, bool streams) {
  const uint64_t step = step_.fetch_add(1);
  std::string step_dir;
  if (dumper_) step_dir = dumper_->StepDir(step);
  RunProfile run;
  if (debug_.profiling) {
    run.tasks.assign(model_->tasks.size(), {0, 0});  // each slot written by the stream running that task
    run.thread_id = static_cast<uint64_t>(::gettid());
    run.start_ns = NowNs();
  }
  DeviceProgram& program = *slot.program;
  if (streams) {
    GE_RETURN_IF_ERROR(slot.runner->Run([&](size_t i) { return RunTaskInstrumented(program, i, &run, step_dir); }));
  } else {
    for (size_t i = 0; i < model_->tasks.size(); ++i)
      GE_RETURN_IF_ERROR(RunTaskInstrumented(program, i, &run, step_dir));
  }
  if (debug_.profiling) {
    run.end_ns = NowNs();
    profile_.Append(std::move(run));
  }
  return {};
}

}  // namespace ge
