#include "devices/cpu/cpu_device.h"

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <dlfcn.h>

#include <atomic>

#include "devices/cpu/aten_bridge.h"
#include "devices/cpu/cpu_program.h"
#include "devices/cpu/kernel_registry.h"

namespace ge::cpu {
namespace {

// Outputs come from torch's allocator so the frontend hands them to the user without a copy.
class TorchAllocator final : public Allocator {
 public:
  explicit TorchAllocator(std::atomic<int64_t>* count) : count_(count) {}
  Expected<Tensor> Allocate(const TensorDesc& desc) override {
    count_->fetch_add(1, std::memory_order_relaxed);
    GE_ASSIGN_OR_RETURN(at::ScalarType type, ToScalarType(desc.dtype));
    return ToGeTensor(at::empty(desc.shape, at::TensorOptions().dtype(type)));
  }

 private:
  std::atomic<int64_t>* count_;
};

// ATen's kernels (and oneDNN's and MKL's under them) size their OpenMP teams by the calling
// thread's omp_get_max_threads. at::set_num_threads would also change the process-wide default
// and clear oneDNN's primitive cache, so a stream's thread sets only its own OpenMP setting,
// through the OpenMP runtime torch loaded (looked up, not linked: our binaries must use
// torch's runtime, never a second one).
class OpenMpThreads {
 public:
  OpenMpThreads() {
    set_ = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
    get_ = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  }
  int Set(int threads) const {
    if (set_ == nullptr || get_ == nullptr) return 0;
    const int before = get_();
    if (threads > 0 && threads != before) set_(threads);
    return before;
  }

 private:
  void (*set_)(int) = nullptr;
  int (*get_)() = nullptr;
};

class CpuDevice final : public Device {
 public:
  const std::string& name() const override { return name_; }
  const KernelFactory& kernel_factory() const override { return CpuKernelRegistry::Global(); }
  Allocator& allocator() override { return allocator_; }
  Expected<std::unique_ptr<DeviceProgram>> Instantiate(std::shared_ptr<const Model> model) override {
    allocations_.fetch_add(1, std::memory_order_relaxed);  // the program's arena
    return CpuProgram::Create(std::move(model));
  }
  int64_t allocations() const override { return allocations_.load(std::memory_order_relaxed); }
  int IntraOpThreads() const override { return at::get_num_threads(); }
  int SetThreadParallelism(int threads) override { return openmp_.Set(threads); }

 private:
  OpenMpThreads openmp_;
  std::string name_ = kCpuDeviceName;
  std::atomic<int64_t> allocations_{0};
  TorchAllocator allocator_{&allocations_};
};

}  // namespace

void RegisterCpuDevice() {
  DeviceRegistry::Register(kCpuDeviceName, [] { return std::make_shared<CpuDevice>(); });
}

}  // namespace ge::cpu
