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
  FusedKernelTask(GeFusedKernelFn fn, std::vector<at::Tensor> buffers)
      : fn_(fn), tensors_(std::move(buffers)), pointers_(tensors_.size()) {}

  // A producer's TaskDef lives here: its kernel refers to it.
  Status AddProducer(TaskDef task, const std::vector<at::Tensor>& inputs, std::vector<bool> constant_inputs,
                     const at::Tensor& output, const KernelLibrary* library) {
    producer_tasks_.push_back(std::make_unique<TaskDef>(std::move(task)));
    KernelArgs args{*producer_tasks_.back(), inputs, {output}, {}, library, std::move(constant_inputs)};
    GE_ASSIGN_OR_RETURN(auto kernel, CpuKernelRegistry::Global().Create(args));
    producers_.push_back(std::move(kernel));
    return {};
  }

  Status Launch() override {
    for (auto& producer : producers_) GE_RETURN_IF_ERROR(producer->Launch());
    // Inputs and outputs may be rebound between runs: read the addresses now.
    for (size_t i = 0; i < tensors_.size(); ++i) pointers_[i] = tensors_[i].data_ptr();
    fn_(pointers_.data(), &kRuntime);
    return {};
  }

 private:
  GeFusedKernelFn fn_;
  std::vector<at::Tensor> tensors_;  // the kernel's buffers: its inputs, then its outputs
  std::vector<void*> pointers_;
  std::vector<std::unique_ptr<TaskDef>> producer_tasks_;
  std::vector<std::unique_ptr<Kernel>> producers_;
};

// Producer k's own attrs, stored on the fused node as "producer<k>.<name>".
AttrMap ProducerAttrs(const AttrMap& fused, size_t k) {
  const std::string prefix = fmt::format("producer{}.", k);
  AttrMap attrs;
  for (const auto& [key, value] : fused)
    if (key.rfind(prefix, 0) == 0) attrs.emplace(key.substr(prefix.size()), value);
  return attrs;
}

TaskDef ProducerTask(const TaskDef& fused, size_t k, const std::string& type) {
  TaskDef task;
  task.name = fmt::format("{}/{}", fused.name, type);
  task.type = type;
  task.engine = fused.engine;
  task.stream = fused.stream;
  task.fx_node = fused.fx_node;
  task.attrs = ProducerAttrs(fused.attrs, k);
  task.output_used = {true};
  return task;
}

Expected<std::unique_ptr<Kernel>> CreateFusedKernel(KernelArgs& a) {
  GE_CHECK(a.library != nullptr, "FusedKernel '{}': the model has no kernel library", a.task.name);
  GE_ASSIGN_OR_RETURN(std::string symbol, a.Attr<std::string>("kernel"));
  GE_ASSIGN_OR_RETURN(GeFusedKernelFn fn, a.library->Find(symbol));
  const auto types = GetAttrOr<std::vector<std::string>>(a.task.attrs, "producers", {});
  const auto counts = GetAttrOr<std::vector<int64_t>>(a.task.attrs, "producer_inputs", {});
  const auto buffers_of = GetAttrOr<std::vector<int64_t>>(a.task.attrs, "producer_buffers", {});
  GE_CHECK(counts.size() == types.size() && buffers_of.size() == types.size() && a.workspaces.size() == types.size(),
           "FusedKernel '{}': producer attrs and workspaces disagree", a.task.name);
  size_t producer_inputs = 0;
  for (int64_t c : counts) producer_inputs += static_cast<size_t>(c);
  GE_CHECK(producer_inputs <= a.inputs.size(), "FusedKernel '{}': producer_inputs exceeds the inputs", a.task.name);
  std::map<int64_t, size_t> producer_at_buffer;
  for (size_t k = 0; k < types.size(); ++k) producer_at_buffer[buffers_of[k]] = k;
  std::vector<at::Tensor> buffers;
  size_t next = producer_inputs;
  const size_t kernel_inputs = a.inputs.size() - producer_inputs + types.size();
  for (size_t b = 0; b < kernel_inputs; ++b) {
    if (auto it = producer_at_buffer.find(static_cast<int64_t>(b)); it != producer_at_buffer.end()) {
      buffers.push_back(a.workspaces[it->second]);
      continue;
    }
    GE_CHECK(next < a.inputs.size(), "FusedKernel '{}': fewer inputs than its kernel reads", a.task.name);
    const at::Tensor& t = a.inputs[next++];
    GE_CHECK(t.defined() && t.is_contiguous(), "FusedKernel '{}': every input must be a dense tensor", a.task.name);
    buffers.push_back(t);
  }
  for (const at::Tensor& t : a.outputs) buffers.push_back(t);
  auto task = std::make_unique<FusedKernelTask>(fn, std::move(buffers));
  size_t first = 0;
  for (size_t k = 0; k < types.size(); ++k) {
    const auto begin = a.inputs.begin() + static_cast<std::ptrdiff_t>(first);
    std::vector<at::Tensor> inputs(begin, begin + static_cast<std::ptrdiff_t>(counts[k]));
    std::vector<bool> constant;
    for (size_t i = first; i < first + static_cast<size_t>(counts[k]); ++i) constant.push_back(a.InputIsConstant(i));
    first += static_cast<size_t>(counts[k]);
    GE_RETURN_IF_ERROR(task->AddProducer(ProducerTask(a.task, k, types[k]), inputs, std::move(constant), a.workspaces[k], a.library)
                           .WithContext(fmt::format("FusedKernel '{}' producer {} ({})", a.task.name, k, types[k])));
  }
  return std::unique_ptr<Kernel>(std::move(task));
}

// Each producer's output is scratch live only inside the task.
std::vector<TensorDesc> FusedKernelWorkspaces(const std::vector<TensorDesc>&, const std::vector<TensorDesc>&,
                                              const AttrMap& attrs) {
  const auto dtypes = GetAttrOr<std::vector<int64_t>>(attrs, "producer_dtypes", {});
  const auto ranks = GetAttrOr<std::vector<int64_t>>(attrs, "producer_ranks", {});
  const auto dims = GetAttrOr<std::vector<int64_t>>(attrs, "producer_shapes", {});
  std::vector<TensorDesc> out;
  size_t next = 0;
  for (size_t k = 0; k < dtypes.size() && k < ranks.size(); ++k) {
    const auto rank = static_cast<size_t>(ranks[k]);
    if (next + rank > dims.size()) break;  // malformed: the creator reports the mismatch
    out.emplace_back(static_cast<DataType>(dtypes[k]),
                     Shape(dims.begin() + static_cast<std::ptrdiff_t>(next), dims.begin() + static_cast<std::ptrdiff_t>(next + rank)));
    next += rank;
  }
  return out;
}

}  // namespace

std::optional<ProducerInput> FusedKernelProducerInput(const AttrMap& fused_attrs, int index) {
  const auto types = GetAttrOr<std::vector<std::string>>(fused_attrs, "producers", {});
  const auto counts = GetAttrOr<std::vector<int64_t>>(fused_attrs, "producer_inputs", {});
  int64_t first = 0;
  for (size_t k = 0; k < types.size() && k < counts.size(); ++k) {
    if (index < first + counts[k]) return ProducerInput{types[k], static_cast<int>(index - first), ProducerAttrs(fused_attrs, k)};
    first += counts[k];
  }
  return std::nullopt;
}

void RegisterFusedKernel(CpuKernelRegistry& r) { r.Register("FusedKernel", CreateFusedKernel, FusedKernelWorkspaces); }

}  // namespace ge::cpu
