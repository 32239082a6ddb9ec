// Calling a torch operator through the dispatcher with a boxed stack: shared by TorchOp (the
// host-fallback engine) and framework ops (custom operators, framework_op_kernel.cc).
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <optional>

#include <string>
#include <vector>

namespace ge::cpu {

// The operator "ns::name" or "ns::name.overload" ("default" is the unnamed overload), if torch
// has it registered.
std::optional<c10::OperatorHandle> FindOperator(const std::string& qualified_name);

// Copies the tensors an operator left on `stack` (Tensor and Tensor[] returns, in order) into
// the planned outputs; throws naming `op_name` when a count, shape or dtype differs from the plan.
void CopyReturns(const torch::jit::Stack& stack, std::vector<at::Tensor>& outputs, const std::string& op_name);

}  // namespace ge::cpu
