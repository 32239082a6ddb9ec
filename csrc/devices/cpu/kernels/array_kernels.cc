// Data movement kernels. Reshape/Flatten copy for now; zero-copy views arrive with the
// memory planner's aliasing support.
#include <ATen/ops/cat.h>

#include "devices/cpu/kernel_registry.h"

namespace ge::cpu {
namespace {

// y viewed with x's shape receives x: a straight contiguous copy.
Expected<std::unique_ptr<Kernel>> CreateReshapeCopy(KernelArgs& a) {
  at::Tensor dst = a.outputs[0].view(a.inputs[0].sizes());
  return MakeKernel(a.task, [dst, x = a.inputs[0]]() mutable { dst.copy_(x); });
}

Expected<std::unique_ptr<Kernel>> CreateTranspose(KernelArgs& a) {
  at::Tensor src = a.inputs[0].permute(ConstIntValues(a.inputs[1]));
  return MakeKernel(a.task, [src, y = a.outputs[0]]() mutable { y.copy_(src); });
}

Expected<std::unique_ptr<Kernel>> CreateConcatV2(KernelArgs& a) {
  std::vector<at::Tensor> parts(a.inputs.begin(), a.inputs.end() - 1);
  const int64_t dim = ConstIntValues(a.inputs.back()).at(0);
  return MakeKernel(a.task, [parts, dim, y = a.outputs[0]]() mutable { at::cat_out(y, parts, dim); });
}

}  // namespace

void RegisterArrayKernels(CpuKernelRegistry& r) {
  r.Register("Reshape", CreateReshapeCopy);
  r.Register("Flatten", CreateReshapeCopy);
  r.Register("Transpose", CreateTranspose);
  r.Register("ConcatV2", CreateConcatV2);
}

}  // namespace ge::cpu
