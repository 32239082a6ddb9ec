// Calling a torch operator through the dispatcher with a boxed stack: shared by TorchOp (the
// host-fallback engine) and framework ops (custom operators, framework_op_kernel.cc).
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <optional>
#include <set>

#include <string>
#include <vector>

#include "ge/base/status.h"

namespace ge::cpu {

// The operator "ns::name" or "ns::name.overload" ("default" is the unnamed overload), if torch
// has it registered.
std::optional<c10::OperatorHandle> FindOperator(const std::string& qualified_name);

// torch.distributed's operator namespaces (c10d, functional collectives, DTensor's). The one
// list: the Python frontend reads it too (torchair_ge._C.collective_namespaces).
const std::set<std::string>& CollectiveNamespaces();

// Unimplemented for torch.distributed's operators (c10d, functional collectives, DTensor's):
// their work finishes after they return and is found again by the output tensor's identity,
// so running one here and copying its result would hand on data the collective has not yet
// written. The frontend refuses them first; this keeps a graph read from a file honest too.
Status RefuseCollective(const std::string& qualified_name);

// Copies the tensors an operator left on `stack` (Tensor and Tensor[] returns, in order) into
// the planned outputs; throws naming `op_name` when a count, shape or dtype differs from the plan.
void CopyReturns(const torch::jit::Stack& stack, std::vector<at::Tensor>& outputs, const std::string& op_name);

}  // namespace ge::cpu
