#include "devices/cpu/cpu_program.h"

#include <ATen/ops/empty.h>

#include <map>

#include "devices/cpu/aten_bridge.h"
#include "devices/cpu/kernel_registry.h"

namespace ge::cpu {

Expected<std::unique_ptr<DeviceProgram>> CpuProgram::Create(std::shared_ptr<const Model> model) {
  auto program = std::unique_ptr<CpuProgram>(new CpuProgram());
  program->model_ = model;
  // torch's CPU allocator aligns to 64 bytes, which the planner's offsets assume.
  program->arena_ = at::empty({std::max<int64_t>(model->arena_size, 1)}, at::TensorOptions().dtype(at::kByte));
  auto* arena = static_cast<uint8_t*>(program->arena_.data_ptr());

  program->values_.resize(model->values.size());
  program->io_storages_.resize(model->values.size());
  // Values in one input's or output's memory (an in-place update, a view, a value computed in
  // the output it is viewed as) share the storage of the first, each with its own shape.
  std::map<std::pair<Placement, int32_t>, size_t> first_value_of_io;
  for (size_t id = 0; id < model->values.size(); ++id) {
    const ValueInfo& v = model->values[id];
    Expected<at::Tensor> t = InvalidArgument("unplaced value");
    switch (v.placement) {
      case Placement::kArena: t = WrapMemory(arena + v.offset, v.desc, v.strides); break;
      case Placement::kConstant: t = WrapMemory(v.constant.data(), v.desc, v.strides); break;
      case Placement::kInput:
      case Placement::kOutput: {
        auto [it, first] = first_value_of_io.emplace(std::make_pair(v.placement, v.io_index), id);
        if (!first) {
          program->io_storages_[id] = program->io_storages_[it->second];
          t = TensorOnStorage(v.desc, program->io_storages_[id], v.offset, v.strides);
          break;
        }
        t = MakeRebindableTensor(v.desc, &program->io_storages_[id]);
        break;
      }
    }
    if (!t.ok()) return t.status().WithContext(fmt::format("binding output of '{}'", v.producer));
    program->values_[id] = std::move(t).value();
  }

  const auto& registry = CpuKernelRegistry::Global();
  for (const TaskDef& task : model->tasks) {
    KernelArgs args{task, {}, {}, {}, model->kernel_library.get(), {}, model->sizes_vary};
    for (int32_t id : task.inputs) {
      args.inputs.push_back(id < 0 ? at::Tensor() : program->values_[static_cast<size_t>(id)]);
      args.constant_inputs.push_back(id >= 0 &&
                                     model->values[static_cast<size_t>(id)].placement == Placement::kConstant);
    }
    for (int32_t id : task.outputs) args.outputs.push_back(program->values_[static_cast<size_t>(id)]);
    for (int32_t id : task.workspaces) args.workspaces.push_back(program->values_[static_cast<size_t>(id)]);
    GE_ASSIGN_OR_RETURN(auto kernel, registry.Create(args));
    program->kernels_.push_back(std::move(kernel));
  }
  return std::unique_ptr<DeviceProgram>(std::move(program));
}

}  // namespace ge::cpu
