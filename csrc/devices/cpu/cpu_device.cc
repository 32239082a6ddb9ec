#include "devices/cpu/cpu_device.h"

#include <ATen/ops/empty.h>

#include "devices/cpu/aten_bridge.h"
#include "devices/cpu/cpu_program.h"
#include "devices/cpu/kernel_registry.h"

namespace ge::cpu {
namespace {

// Outputs come from torch's allocator so the frontend hands them to the user without a copy.
class TorchAllocator final : public Allocator {
 public:
  Expected<Tensor> Allocate(const TensorDesc& desc) override {
    GE_ASSIGN_OR_RETURN(at::ScalarType type, ToScalarType(desc.dtype));
    return ToGeTensor(at::empty(desc.shape, at::TensorOptions().dtype(type)));
  }
};

class CpuDevice final : public Device {
 public:
  const std::string& name() const override { return name_; }
  const KernelFactory& kernel_factory() const override { return CpuKernelRegistry::Global(); }
  Allocator& allocator() override { return allocator_; }
  Expected<std::unique_ptr<DeviceProgram>> Instantiate(std::shared_ptr<const Model> model) override {
    return CpuProgram::Create(std::move(model));
  }

 private:
  std::string name_ = kCpuDeviceName;
  TorchAllocator allocator_;
};

}  // namespace

void RegisterCpuDevice() {
  DeviceRegistry::Register(kCpuDeviceName, [] { return std::make_shared<CpuDevice>(); });
}

}  // namespace ge::cpu
