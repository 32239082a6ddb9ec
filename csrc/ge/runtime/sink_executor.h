// Sink executor (static shapes): every task is bound once per DeviceProgram; a run binds the
// caller's inputs and fresh output tensors, then replays the task list. Profiling and data
// dumps (RunDebugOptions) switch to an instrumented loop; plain runs pay one branch for them.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "ge/runtime/device.h"
#include "ge/runtime/run_debug.h"

namespace ge {

class SinkExecutor {
 public:
  SinkExecutor(std::shared_ptr<const Model> model, std::shared_ptr<Device> device, RunDebugOptions debug = {});

  // Thread-safe: concurrent runs each take a DeviceProgram from the pool.
  Status Run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs);
  // Instantiates one program up front so that load errors surface at compile time.
  Status Warmup();
  const Model& model() const { return *model_; }
  // Profiled runs so far (emptied by the call); nullopt-like empty when profiling is off.
  std::vector<RunProfile> TakeProfile(uint64_t* dropped) { return profile_.Take(dropped); }
  bool profiling() const { return debug_.profiling; }

 private:
  Status CheckInputs(const std::vector<Tensor>& inputs) const;
  Status MakeOutputs(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs) const;
  Status LaunchInstrumented(DeviceProgram& program);
  Expected<std::unique_ptr<DeviceProgram>> Acquire();
  void Release(std::unique_ptr<DeviceProgram> program);

  std::shared_ptr<const Model> model_;
  std::shared_ptr<Device> device_;
  RunDebugOptions debug_;
  std::unique_ptr<DataDumper> dumper_;  // set when data dumps are on
  ProfileLog profile_;
  std::atomic<uint64_t> step_{0};
  std::mutex pool_mu_;
  std::vector<std::unique_ptr<DeviceProgram>> pool_;
};

}  // namespace ge
