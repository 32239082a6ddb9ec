// FusedKernel: a generated kernel from the model's kernel library, called through the runtime
// ABI (fused_kernel_abi.h) with ATen's thread pool as its parallel_for. With a producer (a
// library op such as MatMulV2 whose output only the kernel reads), the task first runs the
// producer into a workspace and then the generated epilogue over it while it is still in cache.
#include <ATen/Parallel.h>

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

constexpr const char* kProducerPrefix = "producer.";

class FusedKernelTask final : public Kernel {
 public:
  FusedKernelTask(GeFusedKernelFn fn, std::vector<at::Tensor> buffers, std::string name)
      : fn_(fn), tensors_(std::move(buffers)), pointers_(tensors_.size()), name_(std::move(name)) {}

  // The producer's TaskDef lives here: its kernel refers to it.
  Status SetProducer(const TaskDef& task, const std::vector<at::Tensor>& inputs, const at::Tensor& output,
                     const KernelLibrary* library) {
    producer_task_ = std::make_unique<TaskDef>(task);
    KernelArgs args{*producer_task_, inputs, {output}, {}, library};
    GE_ASSIGN_OR_RETURN(producer_, CpuKernelRegistry::Global().Create(args));
    return {};
  }

  Status Launch() override {
    if (producer_) GE_RETURN_IF_ERROR(producer_->Launch());
    // Inputs and outputs may be rebound between runs: read the addresses now.
    for (size_t i = 0; i < tensors_.size(); ++i) pointers_[i] = tensors_[i].data_ptr();
    fn_(pointers_.data(), &kRuntime);
    return {};
  }

 private:
  GeFusedKernelFn fn_;
  std::vector<at::Tensor> tensors_;  // the kernel's buffers: its inputs, then its outputs
  std::vector<void*> pointers_;
  std::string name_;
  std::unique_ptr<TaskDef> producer_task_;
  std::unique_ptr<Kernel> producer_;
};

// The producer's task: its type and its own attrs (stored with the "producer." prefix).
TaskDef ProducerTask(const TaskDef& fused, const std::string& type) {
  TaskDef task;
  task.name = fused.name + "/" + type;
  task.type = type;
  task.engine = fused.engine;
  task.stream = fused.stream;
  task.fx_node = fused.fx_node;
  for (const auto& [key, value] : fused.attrs)
    if (key.rfind(kProducerPrefix, 0) == 0) task.attrs.emplace(key.substr(std::string(kProducerPrefix).size()), value);
  task.output_used = {true};
  return task;
}

Expected<std::unique_ptr<Kernel>> CreateFusedKernel(KernelArgs& a) {
  GE_CHECK(a.library != nullptr, "FusedKernel '{}': the model has no kernel library", a.task.name);
  GE_ASSIGN_OR_RETURN(std::string symbol, a.Attr<std::string>("kernel"));
  GE_ASSIGN_OR_RETURN(GeFusedKernelFn fn, a.library->Find(symbol));
  const std::string producer = GetAttrOr<std::string>(a.task.attrs, "producer", "");
  const auto producer_inputs = static_cast<size_t>(producer.empty() ? 0 : GetAttrOr<int64_t>(a.task.attrs, "producer_inputs", 0));
  const int64_t producer_buffer = producer.empty() ? -1 : GetAttrOr<int64_t>(a.task.attrs, "producer_buffer", -1);
  GE_CHECK(producer_inputs <= a.inputs.size(), "FusedKernel '{}': producer_inputs exceeds the inputs", a.task.name);
  std::vector<at::Tensor> buffers;
  size_t next = producer_inputs;
  const size_t kernel_inputs = a.inputs.size() - producer_inputs + (producer.empty() ? 0 : 1);
  for (size_t b = 0; b < kernel_inputs; ++b) {
    if (static_cast<int64_t>(b) == producer_buffer) {
      GE_CHECK(!a.workspaces.empty(), "FusedKernel '{}': no workspace for the producer's output", a.task.name);
      buffers.push_back(a.workspaces[0]);
      continue;
    }
    GE_CHECK(next < a.inputs.size(), "FusedKernel '{}': fewer inputs than its kernel reads", a.task.name);
    const at::Tensor& t = a.inputs[next++];
    GE_CHECK(t.defined() && t.is_contiguous(), "FusedKernel '{}': every input must be a dense tensor", a.task.name);
    buffers.push_back(t);
  }
  for (const at::Tensor& t : a.outputs) buffers.push_back(t);
  auto task = std::make_unique<FusedKernelTask>(fn, std::move(buffers), a.task.name);
  if (!producer.empty()) {
    std::vector<at::Tensor> inputs(a.inputs.begin(), a.inputs.begin() + static_cast<std::ptrdiff_t>(producer_inputs));
    GE_RETURN_IF_ERROR(task->SetProducer(ProducerTask(a.task, producer), inputs, a.workspaces[0], a.library)
                           .WithContext(fmt::format("FusedKernel '{}' producer {}", a.task.name, producer)));
  }
  return std::unique_ptr<Kernel>(std::move(task));
}

// The producer's output is scratch live only inside the task.
std::vector<TensorDesc> FusedKernelWorkspaces(const std::vector<TensorDesc>&, const std::vector<TensorDesc>&,
                                              const AttrMap& attrs) {
  if (!attrs.count("producer")) return {};
  const auto dtype = static_cast<DataType>(GetAttrOr<int64_t>(attrs, "producer_dtype", 0));
  const auto shape = GetAttrOr<std::vector<int64_t>>(attrs, "producer_shape", {});
  return {TensorDesc(dtype, shape)};
}

}  // namespace

void RegisterFusedKernel(CpuKernelRegistry& r) { r.Register("FusedKernel", CreateFusedKernel, FusedKernelWorkspaces); }

}  // namespace ge::cpu
