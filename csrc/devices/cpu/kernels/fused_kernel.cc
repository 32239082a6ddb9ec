// FusedKernel: a generated kernel from the model's kernel library, called through the runtime
// ABI (fused_kernel_abi.h) with ATen's thread pool as its parallel_for.
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

class FusedKernelTask final : public Kernel {
 public:
  FusedKernelTask(GeFusedKernelFn fn, std::vector<at::Tensor> tensors, std::string name)
      : fn_(fn), tensors_(std::move(tensors)), buffers_(tensors_.size()), name_(std::move(name)) {}
  Status Launch() override {
    // Inputs and outputs may be rebound between runs: read the addresses now.
    for (size_t i = 0; i < tensors_.size(); ++i) buffers_[i] = tensors_[i].data_ptr();
    fn_(buffers_.data(), &kRuntime);
    return {};
  }

 private:
  GeFusedKernelFn fn_;
  std::vector<at::Tensor> tensors_;  // inputs, then outputs
  std::vector<void*> buffers_;
  std::string name_;
};

Expected<std::unique_ptr<Kernel>> CreateFusedKernel(KernelArgs& a) {
  GE_CHECK(a.library != nullptr, "FusedKernel '{}': the model has no kernel library", a.task.name);
  GE_ASSIGN_OR_RETURN(std::string symbol, a.Attr<std::string>("kernel"));
  GE_ASSIGN_OR_RETURN(GeFusedKernelFn fn, a.library->Find(symbol));
  std::vector<at::Tensor> tensors;
  for (const at::Tensor& t : a.inputs) {
    GE_CHECK(t.defined() && t.is_contiguous(), "FusedKernel '{}': every input must be a dense tensor", a.task.name);
    tensors.push_back(t);
  }
  for (const at::Tensor& t : a.outputs) tensors.push_back(t);
  return std::unique_ptr<Kernel>(new FusedKernelTask(fn, std::move(tensors), a.task.name));
}

}  // namespace

void RegisterFusedKernel(CpuKernelRegistry& r) { r.Register("FusedKernel", CreateFusedKernel); }

}  // namespace ge::cpu
