#include "devices/cpu/cpu_device.h"

#include <ATen/Parallel.h>
#include <ATen/ops/_softmax.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
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

// ATen's kernels (and oneDNN's under them) size their OpenMP teams by the calling thread's
// omp_get_max_threads. at::set_num_threads would also change the process-wide default and clear
// oneDNN's primitive cache, so a stream's thread sets only its own OpenMP setting, through the
// OpenMP runtime torch loaded (looked up, not linked: our binaries must use torch's runtime, never
// a second one).
//
// MKL sizes its teams by its own setting, which torch.set_num_threads makes process-wide
// (mkl_set_num_threads), so a thread narrowed to one OpenMP thread still started an MKL team of
// the process's width: the stream's thread became a second OpenMP master with a worker of its
// own, and with more OpenMP threads than cores libgomp stops spinning between parallel regions
// for every team in the process. Measured on 2 cores after a multi-stream graph had run: eager's
// silu on [64, 1408] 17 -> 77 us, softmax 22 -> 87 us, a LLaMA block 4.2 -> 6.2 ms, for as long as
// the process lived. So MKL gets the same thread-local width (MKL_Set_Num_Threads_Local, MKL's
// own entry point in torch's libtorch; weak: absent without MKL), and its process-wide setting
// back once the thread is set to the width it had before it was narrowed.
extern "C" __attribute__((weak)) int MKL_Set_Num_Threads_Local(int threads);

// ATen sets a thread's OpenMP width up lazily, on the thread's first parallel_for inside libtorch
// (at::internal::lazy_init_num_threads: a flag per thread and per library, libtorch's not
// exported): on a thread of a process where torch.set_num_threads(n) was called, that first
// kernel calls omp_set_num_threads(n) over the stream's share, and the stream's thread then ran
// every kernel as the master of a second team of n (see OpenMpThreads). One small libtorch
// kernel that runs parallel_for (softmax's, whatever its size) sets the new thread up before the
// stream's share is applied -- on every thread whose width the engine sets, once (the caller's
// too: its first streamed run may hold its first parallel_for). Python's dispatch keys are
// excluded: a caller may run the graph under a dispatch mode.
void RunAtensThreadSetUpOnce() {
  thread_local bool done = false;
  if (done) return;
  done = true;
  at::internal::lazy_init_num_threads();  // this library's flag (the engine's own parallel_for calls)
  c10::InferenceMode inference;
  c10::impl::ExcludeDispatchKeyGuard no_python(
      c10::DispatchKeySet({c10::DispatchKey::Python, c10::DispatchKey::PythonTLSSnapshot}));
  at::_softmax(at::zeros({1, 1}), 1, false);  // libtorch's
}

class OpenMpThreads {
 public:
  OpenMpThreads() {
    set_ = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
    get_ = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  }
  int Set(int threads) const {
    if (set_ == nullptr || get_ == nullptr) return 0;
    RunAtensThreadSetUpOnce();
    const int before = get_();
    if (threads > 0 && threads != before) set_(threads);
    if (threads > 0 && MKL_Set_Num_Threads_Local != nullptr) SetMkl(threads, before);
    return before;
  }

 private:
  static void SetMkl(int threads, int before) {
    thread_local int width = 0;  // the thread's OpenMP width before it was narrowed; 0: not narrowed
    if (width == 0) width = before;
    if (threads >= width) {
      MKL_Set_Num_Threads_Local(0);  // MKL's process-wide setting again
      width = 0;
    } else {
      MKL_Set_Num_Threads_Local(threads);
    }
  }

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
