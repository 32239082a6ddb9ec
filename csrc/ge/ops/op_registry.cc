#include "ge/ops/op_registry.h"

#include <algorithm>

#include "ge/base/logging.h"

namespace ge {

OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    RegisterArrayOps(*r);
    RegisterElementwiseOps(*r);
    RegisterMathOps(*r);
    RegisterNnOps(*r);
    RegisterIndexingOps(*r);
    RegisterLogicalOps(*r);
    RegisterInplaceOps(*r);
    RegisterMathExtraOps(*r);
    RegisterSelectionOps(*r);
    RegisterCollectiveOps(*r);
    RegisterFallbackOps(*r);
    return r;
  }();
  return *registry;
}

Status OpRegistry::Register(OpProto proto) {
  GE_CHECK(!proto.type.empty(), "an op prototype needs a type name");
  int dynamic = 0;
  for (const auto& in : proto.inputs) {
    dynamic += in.kind == InputKind::kDynamic;
    GE_CHECK(proto.FindTypeVar(in.type_var), "op {}: input '{}' names unknown type variable '{}'", proto.type, in.name,
             in.type_var);
  }
  GE_CHECK(dynamic <= 1, "op {}: at most one dynamic input is supported", proto.type);
  for (const auto& out : proto.outputs) {
    GE_CHECK(proto.FindTypeVar(out.type_var), "op {}: output '{}' names unknown type variable '{}'", proto.type,
             out.name, out.type_var);
    GE_CHECK(!out.dynamic || proto.outputs.size() == 1, "op {}: a dynamic output must be the only output", proto.type);
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::string type = proto.type;
  GE_CHECK(protos_.emplace(type, std::move(proto)).second, "op {} is already registered", type);
  return {};
}

const OpProto* OpRegistry::Find(const std::string& type) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = protos_.find(type);
  return it == protos_.end() ? nullptr : &it->second;
}

bool IsCollective(const std::string& type) {
  const OpProto* proto = OpRegistry::Global().Find(type);
  return proto != nullptr && proto->communicates;
}

std::vector<std::string> OpRegistry::OpTypes() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> types;
  for (const auto& [type, proto] : protos_) types.push_back(type);
  std::sort(types.begin(), types.end());
  return types;
}

Status OpRegistry::FillDefaults(Node& node) const {
  const OpProto* proto = Find(node.type());
  if (!proto) return NotFound("op type '{}' of node '{}' is not registered", node.type(), node.name());
  for (const auto& attr : proto->attrs)
    if (!node.HasAttr(attr.name) && attr.default_value) node.SetAttr(attr.name, *attr.default_value);
  return {};
}

namespace {

bool Allowed(const TypeVar& tv, DataType dtype) {
  return tv.allowed.empty() || std::find(tv.allowed.begin(), tv.allowed.end(), dtype) != tv.allowed.end();
}

std::string AllowedNames(const TypeVar& tv) {
  std::string out;
  for (DataType dt : tv.allowed) out += std::string(out.empty() ? "" : ", ") + std::string(DataTypeName(dt));
  return out;
}

}  // namespace

Status OpRegistry::VerifyInputs(const Node& node) const {
  const OpProto* proto = Find(node.type());
  if (!proto) return NotFound("op type '{}' of node '{}' is not registered", node.type(), node.name());
  const int fixed = static_cast<int>(proto->inputs.size()) - (proto->DynamicInputIndex() >= 0 ? 1 : 0);
  if (proto->DynamicInputIndex() >= 0) {
    GE_CHECK(node.num_inputs() >= fixed, "{}: needs at least {} inputs, has {}", node.ToString(), fixed,
             node.num_inputs());
  } else {
    GE_CHECK(node.num_inputs() == fixed, "{}: needs {} inputs, has {}", node.ToString(), fixed, node.num_inputs());
  }
  for (size_t d = 0; d < proto->inputs.size(); ++d) {
    const InputDef& def = proto->inputs[d];
    auto [begin, end] = proto->InputRange(static_cast<int>(d), node.num_inputs());
    for (int i = begin; i < end; ++i)
      GE_CHECK(node.input(i).valid() || def.kind == InputKind::kOptional, "{}: required input '{}' is missing",
               node.ToString(), def.name);
  }
  return {};
}

Status OpRegistry::Verify(const Node& node) const {
  GE_RETURN_IF_ERROR(VerifyInputs(node));
  const OpProto* proto = Find(node.type());
  // Messages spell the node only when a check fails (GE_CHECK formats lazily): Verify runs for
  // every node after every pass.

  std::map<std::string, DataType> bound;  // type variable -> dtype seen first
  for (size_t d = 0; d < proto->inputs.size(); ++d) {
    const InputDef& def = proto->inputs[d];
    auto [begin, end] = proto->InputRange(static_cast<int>(d), node.num_inputs());
    for (int i = begin; i < end; ++i) {
      Value v = node.input(i);
      if (!v.valid()) continue;  // optional (VerifyInputs)
      const DataType dtype = v.node->output_desc(v.index).dtype;
      const TypeVar& tv = *proto->FindTypeVar(def.type_var);
      GE_CHECK(Allowed(tv, dtype), "{}: input '{}' has dtype {}; allowed: {}", node.ToString(), def.name,
               DataTypeName(dtype), AllowedNames(tv));
      if (tv.per_value) continue;
      auto [it, inserted] = bound.emplace(def.type_var, dtype);
      GE_CHECK(inserted || it->second == dtype, "{}: input '{}' is {} but another input of type {} is {}",
               node.ToString(), def.name, DataTypeName(dtype), def.type_var, DataTypeName(it->second));
    }
  }

  for (const auto& attr : proto->attrs) {
    auto it = node.attrs().find(attr.name);
    GE_CHECK(it != node.attrs().end(), "{}: required attribute '{}' is not set", node.ToString(), attr.name);
    GE_CHECK(TypeOf(it->second) == attr.type, "{}: attribute '{}' must be {}, got {}", node.ToString(), attr.name,
             AttrTypeName(attr.type), AttrTypeName(TypeOf(it->second)));
  }
  for (const auto& [name, value] : node.attrs())
    GE_CHECK(name.rfind('_', 0) == 0 || proto->FindAttr(name), "{}: unknown attribute '{}'", node.ToString(), name);
  GE_CHECK(proto->HasDynamicOutput() || node.num_outputs() == static_cast<int>(proto->outputs.size()),
           "{}: has {} outputs, the prototype {}", node.ToString(), node.num_outputs(), proto->outputs.size());
  return {};
}

Status OpRegistry::VerifyAndInfer(Node& node) const {
  GE_RETURN_IF_ERROR(FillDefaults(node));
  GE_RETURN_IF_ERROR(Verify(node));
  const OpProto& proto = *Find(node.type());

  std::map<std::string, DataType> bound;
  for (size_t d = 0; d < proto.inputs.size(); ++d) {
    auto [begin, end] = proto.InputRange(static_cast<int>(d), node.num_inputs());
    for (int i = begin; i < end; ++i)
      if (Value v = node.input(i); v.valid())
        bound.emplace(proto.inputs[d].type_var, v.node->output_desc(v.index).dtype);
  }
  for (int o = 0; o < node.num_outputs(); ++o) {
    auto it = bound.find(proto.OutputDefFor(o).type_var);
    if (it != bound.end()) node.output_desc(o).dtype = it->second;
  }
  if (proto.infer_shape) {
    InferContext ctx(node, proto);
    GE_RETURN_IF_ERROR(proto.infer_shape(ctx));
  }
  for (int o = 0; o < node.num_outputs(); ++o) {
    const TensorDesc& out = node.output_desc(o);
    // Every later size computation (memory plan, kernels, offsets) may then multiply freely.
    GE_CHECK(AddressableShape(out.shape, DataTypeSize(out.dtype)),
             "{}: output {} {} is larger than the engine can address (2^62 bytes)", node.ToString(), o, out.ToString());
    const OutputDef& def = proto.OutputDefFor(o);
    const TypeVar& tv = *proto.FindTypeVar(def.type_var);
    const DataType dtype = node.output_desc(o).dtype;
    GE_CHECK(Allowed(tv, dtype), "{}: inferred output '{}' dtype {} is not allowed ({})", node.ToString(), def.name,
             DataTypeName(dtype), AllowedNames(tv));
  }
  return {};
}

namespace {

// `desc` as an error shows it beside `other`: every field when the short forms agree (they
// differ only in format or origin).
std::string Spelled(const TensorDesc& desc, const TensorDesc& other) {
  if (desc.ToString() != other.ToString()) return desc.ToString();
  return fmt::format("{} (format {}, origin shape {}, origin format {})", desc.ToString(), FormatName(desc.format),
                     ShapeToString(desc.origin_shape), FormatName(desc.origin_format));
}

}  // namespace

Status VerifyGraphTypes(Graph& graph) {
  GE_RETURN_IF_ERROR(graph.Verify());
  GE_ASSIGN_OR_RETURN(auto order, graph.TopologicalOrder());
  for (Node* node : order) {
    std::vector<TensorDesc> before;
    for (int o = 0; o < node->num_outputs(); ++o) before.push_back(node->output_desc(o));
    GE_RETURN_IF_ERROR(OpRegistry::Global().VerifyAndInfer(*node));
    for (int o = 0; o < node->num_outputs(); ++o) {
      if (before[static_cast<size_t>(o)].dtype != DataType::kUndefined &&
          !(before[static_cast<size_t>(o)] == node->output_desc(o))) {
        const TensorDesc& stated = before[static_cast<size_t>(o)];
        const std::string message =
            fmt::format("{} output {}: InferShape gives {} but the graph says {}", node->ToString(), o,
                        Spelled(node->output_desc(o), stated), Spelled(stated, node->output_desc(o)));
        node->output_desc(o) = stated;
        return InvalidArgument("{}", message);
      }
    }
  }
  return {};
}

}  // namespace ge
