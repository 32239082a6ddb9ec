// Op-plugin kernels on the CPU device (ge/ops/op_plugin.h): the plugin's compute callback over
// the task's bound tensors, passed as plain {dtype, rank, shape, data} records. Data pointers are
// read at every launch, since graph inputs and outputs are rebound between runs.
#include "devices/cpu/aten_bridge.h"
#include "devices/cpu/kernel_registry.h"
#include "ge/ops/op_plugin.h"

namespace ge::cpu {
namespace {

class PluginKernelTask final : public Kernel {
 public:
  PluginKernelTask(const TaskDef& task, const PluginKernel& plugin, std::vector<at::Tensor> inputs,
                   std::vector<at::Tensor> outputs)
      : task_(task),
        plugin_(plugin),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)),
        in_(Records(inputs_)),
        out_(Records(outputs_)) {}

  Status Launch() override {
    Refresh(inputs_, in_);
    Refresh(outputs_, out_);
    char error[512] = {0};
    const int rc = plugin_.compute(in_.data(), static_cast<int>(in_.size()), out_.data(), static_cast<int>(out_.size()),
                                   AsPluginAttrs(task_.attrs), &PluginApi(), error, sizeof(error));
    if (rc == 0) return {};
    error[sizeof(error) - 1] = '\0';
    return Internal("{} '{}' (op plugin {}) failed: {}", task_.type, task_.name, plugin_.library,
                    error[0] ? error : fmt::format("compute returned {}", rc));
  }

 private:
  static std::vector<TgeTensor> Records(const std::vector<at::Tensor>& tensors) {
    std::vector<TgeTensor> records(tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
      const at::Tensor& t = tensors[i];
      records[i] = TgeTensor{-1, -1, nullptr, nullptr};
      if (!t.defined()) continue;
      auto dtype = FromScalarType(t.scalar_type());
      records[i].dtype = dtype.ok() ? static_cast<int32_t>(*dtype) : -1;
      records[i].rank = static_cast<int32_t>(t.dim());
      records[i].shape = t.sizes().data();  // the bound tensor's own sizes: stable for its lifetime
    }
    return records;
  }
  static void Refresh(const std::vector<at::Tensor>& tensors, std::vector<TgeTensor>& records) {
    for (size_t i = 0; i < tensors.size(); ++i)
      if (tensors[i].defined()) records[i].data = tensors[i].data_ptr();
  }

  const TaskDef& task_;  // owned by the Model, which outlives every program
  const PluginKernel& plugin_;
  std::vector<at::Tensor> inputs_, outputs_;
  std::vector<TgeTensor> in_, out_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> CreatePluginKernel(KernelArgs& a, const PluginKernel& plugin) {
  for (const at::Tensor& t : a.inputs)
    GE_CHECK(!t.defined() || t.is_contiguous(), "{} '{}': op plugins take dense inputs", a.task.type, a.task.name);
  return std::unique_ptr<Kernel>(new PluginKernelTask(a.task, plugin, a.inputs, a.outputs));
}

}  // namespace ge::cpu
