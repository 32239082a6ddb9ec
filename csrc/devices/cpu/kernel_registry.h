// CPU kernels: one creator per op type. A creator runs once per DeviceProgram, reads the
// task's attrs, prepares views of its bound tensors, and returns a Kernel whose Launch()
// calls ATen out-variants into the bound outputs (eager numerics, no intermediate allocation
// by the engine).
#pragma once

#include <functional>
#include <map>
#include <set>
#include <memory>
#include <optional>

#include <ATen/core/Tensor.h>

#include "ge/ops/op_proto.h"
#include "ge/runtime/device.h"

namespace ge {
struct PluginKernel;
}

namespace ge::cpu {

struct KernelArgs {
  const TaskDef& task;
  std::vector<at::Tensor> inputs;  // undefined tensor for an absent optional input
  std::vector<at::Tensor> outputs;
  std::vector<at::Tensor> workspaces;      // arena scratch, as the op's WorkspaceFn asked for
  const KernelLibrary* library = nullptr;  // the model's generated kernels (FusedKernel tasks)
  // Which inputs are constants of the model (fixed for its lifetime, so a kernel may prepare a
  // copy of them at load, e.g. a matmul's reordered weight); empty when unknown.
  std::vector<bool> constant_inputs;
  // The model is one instance of a graph whose sizes vary (Model::sizes_vary): kernels chosen by
  // measurement key their decision by size class, so the next instance's sizes reuse it.
  bool sizes_vary = false;

  bool InputIsConstant(size_t i) const { return i < constant_inputs.size() && constant_inputs[i]; }

  // These args with stand-ins for the operands a kernel chosen by measurement is timed on
  // (kernel_choice.h): at load the arena's buffers are not bound yet, and garbage with denormals
  // would distort the times. Every input that is not a constant becomes a tensor of its sizes
  // and strides filled with 0.5 (the kernels' times do not depend on the values; random ones
  // would draw from torch's generator and change the user's random stream); a constant stays
  // the real one (preparing it, e.g. a reorder, is part of what is timed); outputs and
  // workspaces become empty tensors like them. A kernel builds its timed candidates from these
  // exactly as its real ones from the task's, so no operand is left pointing into the arena.
  KernelArgs WithTimingOperands() const;

  template <typename T>
  Expected<T> Attr(const std::string& name) const {
    auto v = GetAttr<T>(task.attrs, name);
    if (!v.ok()) return v.status().WithContext(fmt::format("{} '{}'", task.type, task.name));
    return v;
  }
};

using KernelCreator = std::function<Expected<std::unique_ptr<Kernel>>(KernelArgs&)>;
// The scratch tensors a kernel needs, from its input/output descs and attrs (KernelFactory::Workspaces).
using WorkspaceFn = std::function<std::vector<TensorDesc>(
    const std::vector<TensorDesc>& inputs, const std::vector<TensorDesc>& outputs, const AttrMap& attrs)>;

// The values of a small integer constant input (axes, perm, concat dim), read at load time.
std::vector<int64_t> ConstIntValues(const at::Tensor& constant);

// Kernels that call one elementwise ATen out-variant on the task's inputs: y = fn(x) / fn(x1, x2).
using UnaryOutFn = at::Tensor& (*)(at::Tensor&, const at::Tensor&);
using BinaryOutFn = at::Tensor& (*)(at::Tensor&, const at::Tensor&, const at::Tensor&);

// Wraps a closure as a Kernel; ATen's exceptions become a Status naming the node.
std::unique_ptr<Kernel> MakeKernel(const TaskDef& task, std::function<void()> body);

class CpuKernelRegistry final : public KernelFactory {
 public:
  static CpuKernelRegistry& Global();
  void Register(const std::string& type, KernelCreator creator, WorkspaceFn workspaces = nullptr);
  // One elementwise ATen out-variant: TensorIterator reads each element before writing it, so
  // these kernels may write over an input (WritesOverInput).
  void RegisterUnary(const std::string& type, UnaryOutFn fn);
  void RegisterBinary(const std::string& type, BinaryOutFn fn);
  bool Supports(const std::string& op_type) const override;
  std::vector<std::string> SupportedOps() const override;
  bool WritesOverInput(const std::string& op_type) const override {
    return elementwise_out_variants_.count(op_type) != 0 || works_in_input_.count(op_type) != 0;
  }
  // A kernel (not elementwise) that is correct with its output in its input's bytes.
  void MarkWritesOverInput(const std::string& type) { works_in_input_.insert(type); }
  // Elementwise out-variants (TensorIterator takes any strides) and GatherV2 (index_select; its
  // indices only as a 1-D tensor, which it reads without reshaping).
  bool AcceptsStridedInput(const std::string& op_type, int index, int rank, const AttrMap& attrs) const override;
  bool CanBeFusedProducer(const std::string& op_type) const override;
  std::vector<TensorDesc> Workspaces(const std::string& op_type, const std::vector<TensorDesc>& inputs,
                                     const std::vector<TensorDesc>& outputs, const AttrMap& attrs) const override;
  Expected<std::unique_ptr<Kernel>> Create(KernelArgs& args) const;

 private:
  std::map<std::string, KernelCreator> creators_;
  // Types registered through RegisterUnary/RegisterBinary: one TensorIterator out-variant each,
  // which both writes over its input safely and reads any strides.
  std::set<std::string> elementwise_out_variants_;
  std::set<std::string> works_in_input_;  // MarkWritesOverInput
  std::map<std::string, WorkspaceFn> workspaces_;
};

// Per-family registration (kernels/*.cc).
void RegisterElementwiseKernels(CpuKernelRegistry& registry);
void RegisterMathKernels(CpuKernelRegistry& registry);
void RegisterNnKernels(CpuKernelRegistry& registry);
void RegisterAttentionKernels(CpuKernelRegistry& registry);
void RegisterRotaryKernels(CpuKernelRegistry& registry);
void RegisterArrayKernels(CpuKernelRegistry& registry);
void RegisterIndexingKernels(CpuKernelRegistry& registry);
void RegisterInplaceKernels(CpuKernelRegistry& registry);
void RegisterMathExtraKernels(CpuKernelRegistry& registry);
void RegisterSelectionKernels(CpuKernelRegistry& registry);
void RegisterCollectiveKernels(CpuKernelRegistry& registry);
void RegisterTorchOpKernel(CpuKernelRegistry& registry);  // the host-fallback engine
// Ops derived from a framework operator's schema (OpProto::framework_op): that operator, called
// through the torch dispatcher (kernels/framework_op_kernel.cc).
Expected<std::unique_ptr<Kernel>> CreateFrameworkOp(KernelArgs& args, const OpProto& proto);
// Ops from op plugins (ge/ops/op_plugin.h): the plugin's compute callback (kernels/plugin_kernel.cc).
Expected<std::unique_ptr<Kernel>> CreatePluginKernel(KernelArgs& args, const PluginKernel& plugin);
void RegisterFusedKernel(CpuKernelRegistry& registry);  // generated kernels (auto-fusion)

}  // namespace ge::cpu
