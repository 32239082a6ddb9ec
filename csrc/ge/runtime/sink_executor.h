// Sink executor (static shapes): every task is bound once per DeviceProgram; a run binds the
// caller's inputs and fresh output tensors, then replays the task list.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "ge/runtime/device.h"

namespace ge {

class SinkExecutor {
 public:
  SinkExecutor(std::shared_ptr<const Model> model, std::shared_ptr<Device> device);

  // Thread-safe: concurrent runs each take a DeviceProgram from the pool.
  Status Run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs);
  // Instantiates one program up front so that load errors surface at compile time.
  Status Warmup();
  const Model& model() const { return *model_; }

 private:
  Status CheckInputs(const std::vector<Tensor>& inputs) const;
  Expected<std::unique_ptr<DeviceProgram>> Acquire();
  void Release(std::unique_ptr<DeviceProgram> program);

  std::shared_ptr<const Model> model_;
  std::shared_ptr<Device> device_;
  std::mutex pool_mu_;
  std::vector<std::unique_ptr<DeviceProgram>> pool_;
};

}  // namespace ge
