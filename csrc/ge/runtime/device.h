// The engine's view of a device: small interfaces and a registry. The core never names a
// concrete device; devices (csrc/devices/*) implement these and register themselves.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ge/runtime/model.h"

namespace ge {

// A kernel bound to fixed addresses at load time; Launch() does the work with no allocation
// of intermediates, no shape inference and no dispatch decisions.
class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual Status Launch() = 0;
};

// Which op types the device runs natively (the partition stage asks this).
class KernelFactory {
 public:
  virtual ~KernelFactory() = default;
  virtual bool Supports(const std::string& op_type) const = 0;
  virtual std::vector<std::string> SupportedOps() const = 0;
  // Whether the op's kernel may write its output over an input of the output's dtype and
  // shape (each element read before it is written): the memory planner then lets an output
  // take the bytes of an input that dies at the op.
  virtual bool WritesOverInput(const std::string& op_type) const { return false; }
  // Whether the op's kernel (with these attrs) reads input `index` (of rank `rank`) correctly
  // when it is a strided view (not dense):
  // the memory planner then lets a select or stepped slice feeding it be a view (no copy).
  virtual bool AcceptsStridedInput(const std::string& op_type, int index, int rank, const AttrMap& attrs) const {
    return false;
  }
  // Whether a generated kernel may run this library op as its producer: inside its own task,
  // into a workspace, with no workspace of its own (auto-fusion's epilogues read its output).
  virtual bool CanBeFusedProducer(const std::string& op_type) const { return false; }
  // Scratch tensors the op's kernel needs while it runs (e.g. statistics or indices an ATen
  // out-variant insists on writing). The memory planner gives each one arena bytes live only
  // at that task, so scratch reuses memory like any value and a run allocates none.
  virtual std::vector<TensorDesc> Workspaces(const std::string& op_type, const std::vector<TensorDesc>& inputs,
                                             const std::vector<TensorDesc>& outputs, const AttrMap& attrs) const {
    return {};
  }
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Memory the caller will own (graph outputs): the device's own allocator, so the framework
  // can take it over without a copy.
  virtual Expected<Tensor> Allocate(const TensorDesc& desc) = 0;
};

// One Model instantiated on a device: its arena and one bound kernel per task. Used by one
// run at a time; a pool of these serves concurrent runs.
class DeviceProgram {
 public:
  virtual ~DeviceProgram() = default;
  // Points an input or output value at caller memory for the next run (O(1), no allocation).
  virtual void BindIo(int32_t value_id, void* data) = 0;
  virtual std::vector<std::unique_ptr<Kernel>>& kernels() = 0;
  // Where value `value_id` lives in this program right now (for data dumps and debugging).
  virtual const void* ValueData(int32_t value_id) const = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const std::string& name() const = 0;
  virtual const KernelFactory& kernel_factory() const = 0;
  virtual Allocator& allocator() = 0;
  // Allocates the arena and binds every task's kernel to its addresses.
  virtual Expected<std::unique_ptr<DeviceProgram>> Instantiate(std::shared_ptr<const Model> model) = 0;
  // Threads one kernel may use (the intra-op pool), and setting the calling thread's share of
  // them while it runs a stream (returns the previous setting; 0 when the device has none). The
  // setting holds for the thread's later kernels: a device whose libraries set a thread up on
  // its first kernel runs that setup first.
  virtual int IntraOpThreads() const { return 1; }
  virtual int SetThreadParallelism(int threads) { return 0; }
  // Device memory allocations the engine has made so far (outputs through allocator(), arenas
  // through Instantiate): tests check that a run allocates nothing but its outputs.
  virtual int64_t allocations() const = 0;
};

class DeviceRegistry {
 public:
  using Factory = std::function<std::shared_ptr<Device>()>;
  // Registering the same name again is a no-op, so device plugins may register eagerly.
  static void Register(const std::string& name, Factory factory);
  static Expected<std::shared_ptr<Device>> Get(const std::string& name);
  static std::vector<std::string> Names();
};

}  // namespace ge
