// Data movement kernels. Reshape/Flatten copy for now; zero-copy views arrive with the
// memory planner's aliasing support.
#include <ATen/ops/arange.h>
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

// The bounds are read at each run (inputs need not be constants), into the planned output.
Expected<std::unique_ptr<Kernel>> CreateRange(KernelArgs& a) {
  const std::string name = a.task.name;
  return MakeKernel(
      a.task, [name, start = a.inputs[0], limit = a.inputs[1], delta = a.inputs[2], y = a.outputs[0]]() mutable {
        // arange_out would resize a wrong-length output, which here is a view of the arena.
        at::Tensor values = at::arange(start.item(), limit.item(), delta.item(), y.options());
        if (values.numel() != y.numel())
          throw std::length_error(
              fmt::format("Range '{}': the bounds give {} elements, the plan has {}", name, values.numel(), y.numel()));
        y.copy_(values);
      });
}

}  // namespace

void RegisterArrayKernels(CpuKernelRegistry& r) {
  r.Register("Reshape", CreateReshapeCopy);
  r.Register("Flatten", CreateReshapeCopy);
  r.Register("Transpose", CreateTranspose);
  r.Register("ConcatV2", CreateConcatV2);
  r.Register("Range", CreateRange);
}

}  // namespace ge::cpu
