// In-place updates of graph inputs: the output tensor is the input's memory.
#include <ATen/ops/index_copy.h>

#include "devices/cpu/kernel_registry.h"

namespace ge::cpu {

void RegisterInplaceKernels(CpuKernelRegistry& r) {
  r.Register("Assign", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    // (An Assign whose value the memory plan computed in ref's own bytes gets no task at all.)
    return MakeKernel(a.task, [ref = a.inputs[0], value = a.inputs[1]]() mutable { ref.copy_(value); });
  });
  r.Register("InplaceIndexCopy", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    GE_ASSIGN_OR_RETURN(int64_t dim, a.Attr<int64_t>("dim"));
    // A 0-d index copies one slice: give it (and the update) the 1-D form index_copy_ takes.
    at::Tensor indices = a.inputs[1].dim() == 0 ? a.inputs[1].reshape({1}) : a.inputs[1];
    at::Tensor updates = a.inputs[2];
    if (updates.dim() != a.inputs[0].dim()) updates = updates.unsqueeze(dim < 0 ? dim + a.inputs[0].dim() : dim);
    return MakeKernel(a.task,
                      [dim, var = a.inputs[0], indices, updates]() mutable { var.index_copy_(dim, indices, updates); });
  });
}

}  // namespace ge::cpu
