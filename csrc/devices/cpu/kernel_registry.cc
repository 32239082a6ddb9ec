#include "devices/cpu/kernel_registry.h"

#include <ATen/ops/empty_like.h>
#include <ATen/ops/full_like.h>

#include "ge/ops/op_plugin.h"
#include "ge/ops/op_registry.h"
#include "ge/ops/op_names.h"

namespace ge::cpu {
namespace {

class ClosureKernel final : public Kernel {
 public:
  ClosureKernel(const TaskDef& task, std::function<void()> body) : task_(task), body_(std::move(body)) {}
  Status Launch() override {
    try {
      body_();
      return {};
    } catch (const std::exception& e) {
      return Internal("{} '{}' failed: {}", task_.type, task_.name, e.what());
    }
  }

 private:
  const TaskDef& task_;  // owned by the Model, which outlives every program
  std::function<void()> body_;
};

}  // namespace

KernelArgs KernelArgs::WithTimingOperands() const {
  KernelArgs scratch = *this;
  for (size_t i = 0; i < scratch.inputs.size(); ++i)
    if (scratch.inputs[i].defined() && !InputIsConstant(i)) scratch.inputs[i] = at::full_like(inputs[i], 0.5);
  for (at::Tensor& t : scratch.outputs)
    if (t.defined()) t = at::empty_like(t);
  for (at::Tensor& t : scratch.workspaces)
    if (t.defined()) t = at::empty_like(t);
  return scratch;
}

std::vector<int64_t> ConstIntValues(const at::Tensor& constant) {
  const at::Tensor values = constant.to(at::kLong).contiguous();
  return std::vector<int64_t>(values.data_ptr<int64_t>(), values.data_ptr<int64_t>() + values.numel());
}

std::unique_ptr<Kernel> MakeKernel(const TaskDef& task, std::function<void()> body) {
  return std::make_unique<ClosureKernel>(task, std::move(body));
}

CpuKernelRegistry& CpuKernelRegistry::Global() {
  static CpuKernelRegistry* registry = [] {
    auto* r = new CpuKernelRegistry();
    RegisterElementwiseKernels(*r);
    RegisterMathKernels(*r);
    RegisterNnKernels(*r);
    RegisterAttentionKernels(*r);
    RegisterRotaryKernels(*r);
    RegisterArrayKernels(*r);
    RegisterIndexingKernels(*r);
    RegisterInplaceKernels(*r);
    RegisterMathExtraKernels(*r);
    RegisterSelectionKernels(*r);
    RegisterCollectiveKernels(*r);
    RegisterTorchOpKernel(*r);
    RegisterFusedKernel(*r);
    return r;
  }();
  return *registry;
}

void CpuKernelRegistry::Register(const std::string& type, KernelCreator creator, WorkspaceFn workspaces) {
  creators_[type] = std::move(creator);
  if (workspaces) workspaces_[type] = std::move(workspaces);
}

std::vector<TensorDesc> CpuKernelRegistry::Workspaces(const std::string& op_type, const std::vector<TensorDesc>& inputs,
                                                      const std::vector<TensorDesc>& outputs,
                                                      const AttrMap& attrs) const {
  auto it = workspaces_.find(op_type);
  return it == workspaces_.end() ? std::vector<TensorDesc>{} : it->second(inputs, outputs, attrs);
}

void CpuKernelRegistry::RegisterUnary(const std::string& type, UnaryOutFn fn) {
  Register(type, [fn](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    return MakeKernel(a.task, [fn, x = a.inputs[0], y = a.outputs[0]]() mutable { fn(y, x); });
  });
  elementwise_out_variants_.insert(type);
}

void CpuKernelRegistry::RegisterBinary(const std::string& type, BinaryOutFn fn) {
  Register(type, [fn](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    return MakeKernel(a.task, [fn, x1 = a.inputs[0], x2 = a.inputs[1], y = a.outputs[0]]() mutable { fn(y, x1, x2); });
  });
  elementwise_out_variants_.insert(type);
}

bool CpuKernelRegistry::AcceptsStridedInput(const std::string& op_type, int index, int rank,
                                            const AttrMap& attrs) const {
  if (elementwise_out_variants_.count(op_type)) return true;
  if (op_type == kOpGatherV2) return index == 0 || (index == 1 && rank == 1);
  return false;
}

bool CpuKernelRegistry::CanBeFusedProducer(const std::string& op_type) const {
  // Kernels that write one dense output and need no workspace of their own (an NHWC Conv2D asks
  // for NCHW scratch for one of its two kernels; as a producer it gets none and runs the other).
  static const std::set<std::string> kProducers = {
      "MatMulV2",        "FusedMatMul", "BatchMatMulV2",     "Conv2D",         "FusedConv2D",
      "Conv2DTranspose", "AvgPoolV2",   "AdaptiveAvgPool2d", "FusedAttention", "GatherV2"};
  return kProducers.count(op_type) != 0;
}

namespace {
const OpProto* FrameworkOpProto(const std::string& op_type) {
  const OpProto* proto = OpRegistry::Global().Find(op_type);
  return proto != nullptr && !proto->framework_op.empty() ? proto : nullptr;
}
}  // namespace

bool CpuKernelRegistry::Supports(const std::string& op_type) const {
  return creators_.count(op_type) != 0 || FrameworkOpProto(op_type) != nullptr || FindPluginKernel(op_type) != nullptr;
}

std::vector<std::string> CpuKernelRegistry::SupportedOps() const {
  std::vector<std::string> out;
  for (const auto& [type, creator] : creators_) out.push_back(type);
  return out;
}

Expected<std::unique_ptr<Kernel>> CpuKernelRegistry::Create(KernelArgs& args) const {
  auto it = creators_.find(args.task.type);
  const OpProto* framework_op = it == creators_.end() ? FrameworkOpProto(args.task.type) : nullptr;
  const PluginKernel* plugin = it == creators_.end() ? FindPluginKernel(args.task.type) : nullptr;
  if (it == creators_.end() && framework_op == nullptr && plugin == nullptr)
    return Unimplemented("no CPU kernel for op type {}", args.task.type);
  try {
    if (framework_op != nullptr) return CreateFrameworkOp(args, *framework_op);
    if (plugin != nullptr) return CreatePluginKernel(args, *plugin);
    return it->second(args);
  } catch (const std::exception& e) {
    return Internal("{} '{}': preparing the kernel failed: {}", args.task.type, args.task.name, e.what());
  }
}

}  // namespace ge::cpu
