// Framework ops (ge/ops/framework_ops.h) on the CPU device: the operator a prototype was derived
// from, called through the torch dispatcher. The stack is laid out once, at load, by walking the
// operator's schema: tensor arguments take the node's inputs of the same name, the others its
// attrs (None for the arguments listed in `none_args`). A mutated argument is handed the
// node's output for it -- the input's own memory when the graph updates a caller's tensor in
// place, otherwise a copy of the input made just before the call.
#include <ATen/core/dispatch/Dispatcher.h>

#include <map>
#include <set>

#include "devices/cpu/aten_bridge.h"
#include "devices/cpu/kernel_registry.h"
#include "devices/cpu/kernels/boxed_call.h"
#include "ge/ops/op_registry.h"

namespace ge::cpu {
namespace {

// The schema type under Optional[...].
c10::TypePtr Unwrapped(const c10::TypePtr& type) {
  if (auto optional = type->cast<c10::OptionalType>()) return optional->getElementType();
  return type;
}

Expected<c10::IValue> AttrToIValue(const AttrValue& value, const c10::TypePtr& type) {
  return std::visit(
      [&](const auto& v) -> Expected<c10::IValue> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, DataType>) {
          GE_ASSIGN_OR_RETURN(at::ScalarType scalar, ToScalarType(v));
          return c10::IValue(static_cast<int64_t>(scalar));
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          return c10::IValue(c10::List<int64_t>(v));
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          return c10::IValue(c10::List<double>(v));
        } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
          c10::List<bool> list;
          for (bool b : v) list.push_back(b);
          return c10::IValue(list);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          return c10::IValue(c10::List<std::string>(v));
        } else if constexpr (std::is_same_v<T, Tensor>) {
          return InvalidArgument("tensor attrs are not schema arguments (schema type {})", type->str());
        } else {
          return c10::IValue(v);
        }
      },
      value);
}

}  // namespace

Expected<std::unique_ptr<Kernel>> CreateFrameworkOp(KernelArgs& a, const OpProto& proto) {
  const std::string& full = proto.framework_op;
  GE_RETURN_IF_ERROR(RefuseCollective(full).WithContext(fmt::format("{} '{}'", a.task.type, a.task.name)));
  auto handle = FindOperator(full);
  if (!handle)
    return NotFound("{} '{}': operator {} is not registered with torch (load the library defining it)", a.task.type,
                    a.task.name, full);
  const auto none_args = GetAttrOr<std::vector<std::string>>(a.task.attrs, "none_args", {});
  const std::set<std::string> passed_none(none_args.begin(), none_args.end());

  // Mutated arguments: the tensor handed to the operator is the node's output for it.
  const auto& mutated = proto.mutated_arguments;
  std::map<int, int> output_of_input;
  for (const auto& [out, in] : mutated) output_of_input[in] = out;
  std::vector<std::pair<at::Tensor, at::Tensor>> copies;

  torch::jit::Stack stack;
  const int num_inputs = static_cast<int>(a.inputs.size());
  for (const c10::Argument& arg : handle->schema().arguments()) {
    const c10::TypePtr type = Unwrapped(arg.type());
    int def_index = -1;
    for (size_t i = 0; i < proto.inputs.size(); ++i)
      if (proto.inputs[i].name == arg.name()) def_index = static_cast<int>(i);
    if (def_index >= 0) {
      const auto [begin, end] = proto.InputRange(def_index, num_inputs);
      if (type->kind() == c10::TypeKind::ListType) {
        c10::List<at::Tensor> list;
        for (int i = begin; i < end; ++i) list.push_back(a.inputs[static_cast<size_t>(i)]);
        stack.emplace_back(list);
        continue;
      }
      if (begin == end || !a.inputs[static_cast<size_t>(begin)].defined()) {
        stack.emplace_back();
        continue;
      }
      at::Tensor tensor = a.inputs[static_cast<size_t>(begin)];
      if (auto it = output_of_input.find(def_index); it != output_of_input.end()) {
        GE_CHECK(it->second < static_cast<int>(a.outputs.size()), "{} '{}': no output for mutated argument '{}'",
                 a.task.type, a.task.name, arg.name());
        at::Tensor updated = a.outputs[static_cast<size_t>(it->second)];
        copies.emplace_back(tensor, updated);
        tensor = updated;
      }
      stack.emplace_back(tensor);
      continue;
    }
    if (passed_none.count(arg.name())) {
      stack.emplace_back();
      continue;
    }
    auto attr = a.task.attrs.find(arg.name());
    if (attr == a.task.attrs.end())
      return InvalidArgument("{} '{}': no input or attr for argument '{}'", a.task.type, a.task.name, arg.name());
    auto value = AttrToIValue(attr->second, type);
    if (!value.ok())
      return value.status().WithContext(fmt::format("{} '{}' argument '{}'", a.task.type, a.task.name, arg.name()));
    stack.push_back(std::move(value).value());
  }
  // Returns come first among the outputs, the updated arguments after them.
  std::vector<at::Tensor> returns(a.outputs.begin(), a.outputs.end() - static_cast<std::ptrdiff_t>(mutated.size()));
  return MakeKernel(a.task, [op = *handle, full, stack, returns, copies]() mutable {
    // An updated copy starts as the input; in place, the two are one memory.
    for (auto& [input, output] : copies)
      if (input.data_ptr() != output.data_ptr()) output.copy_(input);
    torch::jit::Stack call(stack);
    op.callBoxed(call);
    CopyReturns(call, returns, full);
  });
}

}  // namespace ge::cpu
