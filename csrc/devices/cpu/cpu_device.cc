#include "devices/cpu/cpu_device.h"

#include <ATen/ops/empty.h>

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

 private:
  std::string name_ = kCpuDeviceName;
  std::atomic<int64_t> allocations_{0};
  TorchAllocator allocator_{&allocations_};
};

}  // namespace

void RegisterCpuDevice() {
  DeviceRegistry::Register(kCpuDeviceName, [] { return std::make_shared<CpuDevice>(); });
}

}  // namespace ge::cpu
