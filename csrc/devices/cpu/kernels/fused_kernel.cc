// FusedKernel: a generated kernel from the model's kernel library, called through the runtime
// ABI (fused_kernel_abi.h) with ATen's thread pool as its parallel_for. With producers (library
// ops such as MatMulV2 whose outputs only the kernel reads), the task first runs each producer
// into its workspace and then the generated kernel over them while they are still in cache.
#include <ATen/Parallel.h>

#include <map>

#include "devices/cpu/kernel_registry.h"

namespace ge::cpu {
namespace {

void ParallelFor(int64_t n, int64_t grain, void (*body)(int64_t, int64_t, void*), void* ctx) {
  if (n <= grain || at::get_num_threads() == 1 || at::in_parallel_region()) {
    body(0, n, ctx);
    return;
  }
  at::parallel_for(0, n, grain, [&](int64_t begin, int64_t end) { body(begin, end, ctx); });
}

constexpr GeKernelRuntime kRuntime{&ParallelFor};

class FusedKernelTask final : public Kernel {
 public:
  FusedKernelTask(GeFusedKernelFn fn, std::vector<int64_t> sizes, std::vector<at::Tensor> buffers)
      : fn_(fn), sizes_(std::move(sizes)), tensors_(std::move(buffers)), pointers_(tensors_.size()) {}

  // A producer's TaskDef lives here: its kernel refers to it.
  Status AddProducer(TaskDef task, const std::vector<at::Tensor>& inputs, std::vector<bool> constant_inputs,
                     const at::Tensor& output, const KernelArgs& fused) {
    producer_tasks_.push_back(std::make_unique<TaskDef>(std::move(task)));
    const TaskDef& producer = *producer_tasks_.back();
    KernelArgs args{producer, inputs, {output}, {}, fused.library, std::move(constant_inputs), fused.sizes_vary};
    GE_ASSIGN_OR_RETURN(auto kernel, CpuKernelRegistry::Global().Create(args));
    producers_.push_back(std::move(kernel));
    return {};
  }

  Status Launch() override {
    for (auto& producer : producers_) GE_RETURN_IF_ERROR(producer->Launch());
    // Inputs and outputs may be rebound between runs: read the addresses now.
    for (size_t i = 0; i < tensors_.size(); ++i) pointers_[i] = tensors_[i].data_ptr();
    fn_(pointers_.data(), sizes_.data(), &kRuntime);
    return {};
  }

 private:
  GeFusedKernelFn fn_;
  std::vector<int64_t> sizes_;       // extents and strides, for a kernel generated for run-time sizes
  std::vector<at::Tensor> tensors_;  // the kernel's buffers: its inputs, then its outputs
  std::vector<void*> pointers_;
  std::vector<std::unique_ptr<TaskDef>> producer_tasks_;
  std::vector<std::unique_ptr<Kernel>> producers_;
};

TaskDef ProducerTask(const TaskDef& fused, const FusedProducerDef& producer) {
  TaskDef task;
  task.name = fmt::format("{}/{}", fused.name, producer.type);
  task.type = producer.type;
  task.engine = fused.engine;
  task.stream = fused.stream;
  task.fx_node = fused.fx_node;
  task.attrs = producer.attrs;
  task.output_used = {true};
  return task;
}

// The generated kernel's buffers: its inputs (a producer's workspace where one fills the buffer,
// else the task's inputs after the producers'), then its outputs.
Expected<std::vector<at::Tensor>> KernelBuffers(const KernelArgs& a, const FusedKernelDef& def) {
  std::map<int, size_t> producer_at_buffer;
  for (size_t k = 0; k < def.producers.size(); ++k) producer_at_buffer[def.producers[k].buffer] = k;
  const auto producer_inputs = static_cast<size_t>(def.ProducerInputs());
  GE_CHECK(producer_inputs <= a.inputs.size(), "FusedKernel '{}': its producers read more inputs than it has",
           a.task.name);
  std::vector<at::Tensor> buffers;
  size_t next = producer_inputs;
  const size_t kernel_inputs = a.inputs.size() - producer_inputs + def.producers.size();
  for (size_t b = 0; b < kernel_inputs; ++b) {
    if (auto it = producer_at_buffer.find(static_cast<int>(b)); it != producer_at_buffer.end()) {
      buffers.push_back(a.workspaces[it->second]);
      continue;
    }
    GE_CHECK(next < a.inputs.size(), "FusedKernel '{}': fewer inputs than its kernel reads", a.task.name);
    const at::Tensor& t = a.inputs[next++];
    GE_CHECK(t.defined() && t.is_contiguous(), "FusedKernel '{}': every input must be a dense tensor", a.task.name);
    buffers.push_back(t);
  }
  for (const at::Tensor& t : a.outputs) buffers.push_back(t);
  return buffers;
}

Expected<std::unique_ptr<Kernel>> CreateFusedKernel(KernelArgs& a) {
  GE_CHECK(a.library != nullptr, "FusedKernel '{}': the model has no kernel library", a.task.name);
  GE_CHECK(a.task.fused_kernel != nullptr, "FusedKernel '{}': the task carries no kernel definition", a.task.name);
  const FusedKernelDef& def = *a.task.fused_kernel;
  GE_ASSIGN_OR_RETURN(GeFusedKernelFn fn, a.library->Find(def.symbol));
  GE_CHECK(a.workspaces.size() == def.producers.size(), "FusedKernel '{}': {} producers but {} workspaces", a.task.name,
           def.producers.size(), a.workspaces.size());
  GE_ASSIGN_OR_RETURN(std::vector<at::Tensor> buffers, KernelBuffers(a, def));
  auto task = std::make_unique<FusedKernelTask>(fn, def.sizes, std::move(buffers));
  size_t first = 0;
  for (size_t k = 0; k < def.producers.size(); ++k) {
    const FusedProducerDef& producer = def.producers[k];
    const auto count = static_cast<size_t>(producer.num_inputs);
    std::vector<at::Tensor> inputs(a.inputs.begin() + static_cast<std::ptrdiff_t>(first),
                                   a.inputs.begin() + static_cast<std::ptrdiff_t>(first + count));
    std::vector<bool> constant;
    for (size_t i = first; i < first + count; ++i) constant.push_back(a.InputIsConstant(i));
    first += count;
    GE_RETURN_IF_ERROR(
        task->AddProducer(ProducerTask(a.task, producer), inputs, std::move(constant), a.workspaces[k], a)
            .WithContext(fmt::format("FusedKernel '{}' producer {} ({})", a.task.name, k, producer.type)));
  }
  return std::unique_ptr<Kernel>(std::move(task));
}

}  // namespace

// Workspaces come from the kernel's definition (FusedKernelDef::Workspaces), planned by the core.
void RegisterFusedKernel(CpuKernelRegistry& r) { r.Register(kOpFusedKernel, CreateFusedKernel); }

}  // namespace ge::cpu
