// Calling a torch operator through the dispatcher with a boxed stack: shared by TorchOp (the
// host-fallback engine) and framework ops (custom operators, framework_op_kernel.cc).
#pragma once

#include <ATen/core/stack.h>

#include <string>
#include <vector>

namespace ge::cpu {

// Copies the tensors an operator left on `stack` (Tensor and Tensor[] returns, in order) into
// the planned outputs; throws naming `op_name` when a count, shape or dtype differs from the plan.
void CopyReturns(const torch::jit::Stack& stack, std::vector<at::Tensor>& outputs, const std::string& op_name);

}  // namespace ge::cpu
