#include "ge/runtime/sink_executor.h"

#include <unistd.h>

#include <chrono>

#include "ge/base/logging.h"

namespace ge {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

SinkExecutor::SinkExecutor(std::shared_ptr<const Model> model, std::shared_ptr<Device> device, RunDebugOptions debug)
    : model_(std::move(model)), device_(std::move(device)), debug_(std::move(debug)) {}

Status SinkExecutor::Warmup() {
  if (debug_.data_dump) {
    GE_ASSIGN_OR_RETURN(dumper_, DataDumper::Create(*model_, debug_));
  }
  GE_ASSIGN_OR_RETURN(auto program, Acquire());
  Release(std::move(program));
  return {};
}

Expected<std::unique_ptr<DeviceProgram>> SinkExecutor::Acquire() {
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (!pool_.empty()) {
      auto program = std::move(pool_.back());
      pool_.pop_back();
      return program;
    }
  }
  return device_->Instantiate(model_);
}

void SinkExecutor::Release(std::unique_ptr<DeviceProgram> program) {
  std::lock_guard<std::mutex> lock(pool_mu_);
  pool_.push_back(std::move(program));
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
  GE_ASSIGN_OR_RETURN(auto program, Acquire());
  for (size_t i = 0; i < inputs.size(); ++i) program->BindIo(m.input_values[i], inputs[i].data());
  for (size_t k = 0; k < m.outputs.size(); ++k)
    if (m.outputs[k].kind == OutputSource::Kind::kComputed) program->BindIo(m.outputs[k].index, (*outputs)[k].data());

  Status status;
  if (debug_.any()) {
    status = LaunchInstrumented(*program);
  } else {
    for (auto& kernel : program->kernels()) {
      status = kernel->Launch();
      if (!status.ok()) break;
    }
  }
  Release(std::move(program));
  if (!status.ok()) return status.WithContext(fmt::format("running graph '{}'", m.graph_name));
  if (event) GE_LOG_EVENT("graph '{}' run: {:.1f} us, {} tasks", m.graph_name, (NowNs() - start) / 1e3, m.tasks.size());
  return status;
}

Status SinkExecutor::LaunchInstrumented(DeviceProgram& program) {
  const uint64_t step = step_.fetch_add(1);
  std::string step_dir;
  if (dumper_) step_dir = dumper_->StepDir(step);
  RunProfile run;
  if (debug_.profiling) {
    run.tasks.reserve(model_->tasks.size());
    run.thread_id = static_cast<uint64_t>(::gettid());
    run.start_ns = NowNs();
  }
  auto& kernels = program.kernels();
  for (size_t i = 0; i < kernels.size(); ++i) {
    const int64_t task_start = debug_.profiling ? NowNs() : 0;
    GE_RETURN_IF_ERROR(kernels[i]->Launch().WithContext(
        fmt::format("task {} ({} '{}')", i, model_->tasks[i].type, model_->tasks[i].name)));
    if (debug_.profiling) run.tasks.emplace_back(task_start, NowNs());
    if (dumper_ && dumper_->Selected(i)) GE_RETURN_IF_ERROR(dumper_->DumpTask(*model_, i, program, step_dir));
  }
  if (debug_.profiling) {
    run.end_ns = NowNs();
    profile_.Append(std::move(run));
  }
  return {};
}

}  // namespace ge
