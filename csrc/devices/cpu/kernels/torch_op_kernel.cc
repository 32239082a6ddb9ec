// The host-fallback engine on the CPU device: TorchOp runs any registered torch operator
// through the dispatcher with a boxed call. The argument spec is parsed once, at load, into
// a stack template over the bound tensors; a run copies the template, calls the operator
// and copies its results into the planned outputs.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <cstdlib>
#include <set>

#include "devices/cpu/aten_bridge.h"
#include "devices/cpu/kernel_registry.h"
#include "devices/cpu/kernels/boxed_call.h"

namespace ge::cpu {
namespace {

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const size_t end = text.find(',', start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return parts;
}

Expected<int64_t> ParseInt(const std::string& text) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') return InvalidArgument("'{}' is not an integer", text);
  return static_cast<int64_t>(v);
}

Expected<double> ParseFloat(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);  // shortest round-trip text parses back exactly
  if (text.empty() || *end != '\0') return InvalidArgument("'{}' is not a number", text);
  return v;
}

// One spec entry ("kind:payload") -> the IValue the operator's schema argument receives.
Expected<c10::IValue> ParseArg(const std::string& spec, const std::vector<at::Tensor>& inputs) {
  const size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string payload = colon == std::string::npos ? "" : spec.substr(colon + 1);
  auto tensor = [&](const std::string& index) -> Expected<at::Tensor> {
    GE_ASSIGN_OR_RETURN(int64_t k, ParseInt(index));
    GE_CHECK(k >= 0 && k < static_cast<int64_t>(inputs.size()), "tensor input {} out of range ({} inputs)", k,
             inputs.size());
    return inputs[static_cast<size_t>(k)];
  };
  if (kind == "none") return c10::IValue();
  if (kind == "t") {
    GE_ASSIGN_OR_RETURN(at::Tensor t, tensor(payload));
    return c10::IValue(t);
  }
  if (kind == "tl" || kind == "otl") {
    c10::List<at::Tensor> plain;
    c10::List<std::optional<at::Tensor>> optional;
    for (const auto& item : SplitCommas(payload)) {
      if (item == "-1") {
        optional.push_back(std::nullopt);
        continue;
      }
      GE_ASSIGN_OR_RETURN(at::Tensor t, tensor(item));
      plain.push_back(t);
      optional.push_back(t);
    }
    return kind == "tl" ? c10::IValue(plain) : c10::IValue(optional);
  }
  if (kind == "i" || kind == "layout" || kind == "mf") {
    GE_ASSIGN_OR_RETURN(int64_t v, ParseInt(payload));
    return c10::IValue(v);
  }
  if (kind == "f") {
    GE_ASSIGN_OR_RETURN(double v, ParseFloat(payload));
    return c10::IValue(v);
  }
  if (kind == "b") return c10::IValue(payload == "1");
  if (kind == "s") return c10::IValue(payload);
  if (kind == "dev") return c10::IValue(c10::Device(payload));
  if (kind == "dt") {
    GE_ASSIGN_OR_RETURN(int64_t dt, ParseInt(payload));
    GE_ASSIGN_OR_RETURN(at::ScalarType type, ToScalarType(static_cast<DataType>(dt)));
    return c10::IValue(static_cast<int64_t>(type));
  }
  if (kind == "is" || kind == "fs" || kind == "bs") {
    c10::List<int64_t> ints;
    c10::List<double> floats;
    c10::List<bool> bools;
    for (const auto& item : SplitCommas(payload)) {
      if (kind == "is") {
        GE_ASSIGN_OR_RETURN(int64_t v, ParseInt(item));
        ints.push_back(v);
      } else if (kind == "fs") {
        GE_ASSIGN_OR_RETURN(double v, ParseFloat(item));
        floats.push_back(v);
      } else {
        bools.push_back(item == "1");
      }
    }
    if (kind == "is") return c10::IValue(ints);
    return kind == "fs" ? c10::IValue(floats) : c10::IValue(bools);
  }
  return InvalidArgument("unknown argument kind '{}'", kind);
}

Expected<std::unique_ptr<Kernel>> CreateTorchOp(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(std::string op_name, a.Attr<std::string>("op"));
  GE_ASSIGN_OR_RETURN(std::vector<std::string> specs, a.Attr<std::vector<std::string>>("args"));
  GE_RETURN_IF_ERROR(RefuseCollective(op_name).WithContext(fmt::format("TorchOp '{}'", a.task.name)));
  auto handle = FindOperator(op_name);
  if (!handle) return NotFound("TorchOp '{}': operator {} is not registered with torch", a.task.name, op_name);
  const auto& arguments = handle->schema().arguments();
  GE_CHECK(specs.size() == arguments.size(), "TorchOp '{}': {} takes {} arguments, the spec gives {}", a.task.name,
           op_name, arguments.size(), specs.size());
  std::vector<c10::IValue> stack_template;
  for (size_t i = 0; i < specs.size(); ++i) {
    auto value = ParseArg(specs[i], a.inputs);
    if (!value.ok())
      return value.status().WithContext(
          fmt::format("TorchOp '{}' ({}) argument '{}'", a.task.name, op_name, arguments[i].name()));
    stack_template.push_back(std::move(value).value());
  }
  return MakeKernel(a.task, [op = *handle, stack_template, op_name, outputs = a.outputs]() mutable {
    torch::jit::Stack stack(stack_template);
    op.callBoxed(stack);
    CopyReturns(stack, outputs, op_name);
  });
}

}  // namespace

void RegisterTorchOpKernel(CpuKernelRegistry& r) { r.Register("TorchOp", CreateTorchOp); }

std::optional<c10::OperatorHandle> FindOperator(const std::string& qualified_name) {
  const size_t dot = qualified_name.find('.', qualified_name.find("::"));
  const std::string name = qualified_name.substr(0, dot);
  const std::string overload = dot == std::string::npos ? "" : qualified_name.substr(dot + 1);
  return c10::Dispatcher::singleton().findSchema({name, overload == "default" ? "" : overload});
}

const std::set<std::string>& CollectiveNamespaces() {
  static const std::set<std::string> namespaces = {"_c10d_functional", "c10d_functional", "_c10d_functional_autograd",
                                                   "c10d", "_dtensor"};
  return namespaces;
}

Status RefuseCollective(const std::string& qualified_name) {
  const std::string ns = qualified_name.substr(0, qualified_name.find("::"));
  if (!CollectiveNamespaces().count(ns)) return Status();
  return Unimplemented(
      "{} is a torch.distributed collective: collectives inside a compiled graph are not supported yet "
      "(their work completes asynchronously and the engine cannot wait for it)",
      qualified_name);
}

void CopyReturns(const torch::jit::Stack& stack, std::vector<at::Tensor>& outputs, const std::string& op_name) {
  size_t k = 0;
  auto copy = [&](const at::Tensor& result) {
    if (k >= outputs.size()) throw std::runtime_error(op_name + " returned more tensors than planned");
    at::Tensor& out = outputs[k];
    if (result.sizes() != out.sizes() || result.scalar_type() != out.scalar_type())
      throw std::runtime_error(
          fmt::format("{} output {} is {}{} but the graph planned {}{} (from its fake/meta kernel)", op_name, k,
                      c10::toString(result.scalar_type()), ShapeToString(result.sizes().vec()),
                      c10::toString(out.scalar_type()), ShapeToString(out.sizes().vec())));
    out.copy_(result);
    ++k;
  };
  for (const c10::IValue& v : stack) {
    // An undefined tensor is an output the op was asked not to compute (convolution_backward's
    // output_mask): the graph planned no memory for it, as for a None.
    if (v.isTensor() && v.toTensor().defined())
      copy(v.toTensor());
    else if (v.isTensor())
      continue;
    else if (v.isTensorList())
      for (const at::Tensor& t : v.toTensorList().vec()) copy(t);
    else if (!v.isNone())
      throw std::runtime_error(op_name + " returned a " + v.tagKind() + ", which the engine cannot hand on");
  }
  if (k != outputs.size())
    throw std::runtime_error(fmt::format("{} returned {} tensors, the graph planned {}", op_name, k, outputs.size()));
}

}  // namespace ge::cpu
