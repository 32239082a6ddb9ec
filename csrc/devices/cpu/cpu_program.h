#pragma once

#include <ATen/core/Tensor.h>

#include "ge/runtime/device.h"

namespace ge::cpu {

// One Model bound on the CPU: the arena, an at::Tensor per value (arena slices and constants
// fixed; inputs/outputs over storages re-pointed per run), and the bound kernels.
class CpuProgram final : public DeviceProgram {
 public:
  static Expected<std::unique_ptr<DeviceProgram>> Create(std::shared_ptr<const Model> model);

  void BindIo(int32_t value_id, void* data) override {
    io_storages_[static_cast<size_t>(value_id)].set_data_ptr_noswap(c10::DataPtr(data, c10::Device(c10::kCPU)));
  }
  std::vector<std::unique_ptr<Kernel>>& kernels() override { return kernels_; }
  const void* ValueData(int32_t value_id) const override {
    return values_[static_cast<size_t>(value_id)].const_data_ptr();
  }

 private:
  std::shared_ptr<const Model> model_;  // kernels point into its TaskDefs and constants
  at::Tensor arena_;
  std::vector<at::Tensor> values_;
  std::vector<c10::Storage> io_storages_;  // by value id; set for input/output values only
  std::vector<std::unique_ptr<Kernel>> kernels_;
};

}  // namespace ge::cpu
