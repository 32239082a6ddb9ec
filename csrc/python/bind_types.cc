// DataType / Format enums, attribute conversion, and the op registry's public face.
#include <pybind11/stl.h>

#include "devices/cpu/aten_bridge.h"
#include "ge/ops/framework_ops.h"
#include "ge/ops/op_plugin.h"
#include "ge/ops/op_registry.h"
#include "python/py_utils.h"

namespace ge::python {
namespace {

template <typename T>
std::vector<T> ToList(const py::handle& value) {
  std::vector<T> out;
  for (auto item : value) out.push_back(item.cast<T>());
  return out;
}

std::string KindName(InputKind kind) {
  switch (kind) {
    case InputKind::kRequired: return "required";
    case InputKind::kOptional: return "optional";
    case InputKind::kDynamic: return "dynamic";
  }
  return "?";
}

InputKind ParseKind(const std::string& kind) {
  if (kind == "required") return InputKind::kRequired;
  if (kind == "optional") return InputKind::kOptional;
  if (kind == "dynamic") return InputKind::kDynamic;
  throw GeError(fmt::format("unknown input kind '{}' (required, optional, dynamic)", kind));
}

AttrType ParseAttrType(const std::string& name) {
  for (int t = 0; t <= static_cast<int>(AttrType::kTensor); ++t)
    if (AttrTypeName(static_cast<AttrType>(t)) == name) return static_cast<AttrType>(t);
  throw GeError(fmt::format("unknown attr type '{}'", name));
}

}  // namespace

AttrValue ToAttr(const OpProto& proto, const std::string& name, const py::handle& value) {
  const AttrDef* def = proto.FindAttr(name);
  AttrType type;
  if (def) {
    type = def->type;
  } else if (py::isinstance<py::bool_>(value)) {
    type = AttrType::kBool;
  } else if (py::isinstance<py::int_>(value)) {
    type = AttrType::kInt;
  } else if (py::isinstance<py::float_>(value)) {
    type = AttrType::kFloat;
  } else if (py::isinstance<py::str>(value)) {
    type = AttrType::kString;
  } else {
    throw GeError(
        fmt::format("{}: attribute '{}' is not declared and its Python type is not a scalar", proto.type, name));
  }
  try {
    switch (type) {
      case AttrType::kInt: return value.cast<int64_t>();
      case AttrType::kFloat: return value.cast<double>();
      case AttrType::kBool: return value.cast<bool>();
      case AttrType::kString: return value.cast<std::string>();
      case AttrType::kDataType: return value.cast<DataType>();
      case AttrType::kListInt: return ToList<int64_t>(value);
      case AttrType::kListFloat: return ToList<double>(value);
      case AttrType::kListBool: return ToList<bool>(value);
      case AttrType::kListString: return ToList<std::string>(value);
      case AttrType::kTensor: return Unwrap(cpu::ToGeTensor(value.cast<at::Tensor>().contiguous()));
    }
  } catch (const py::cast_error&) {
  }
  throw GeError(fmt::format("{}: attribute '{}' must be {}, got {}", proto.type, name, AttrTypeName(type),
                            py::str(py::type::of(value)).cast<std::string>()));
}

py::object FromAttr(const AttrValue& value) {
  return std::visit(
      [](const auto& x) -> py::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Tensor>)
          return py::cast(x.desc().ToString());
        else
          return py::cast(x);
      },
      value);
}

void BindTypes(py::module_& m) {
  auto dtype = py::enum_<DataType>(m, "DataType");
  for (DataType dt : {DataType::kFloat, DataType::kFloat16, DataType::kInt8, DataType::kInt32, DataType::kUInt8,
                      DataType::kInt16, DataType::kUInt16, DataType::kUInt32, DataType::kInt64, DataType::kUInt64,
                      DataType::kDouble, DataType::kBool, DataType::kBFloat16, DataType::kUndefined})
    dtype.value(std::string(DataTypeName(dt)).c_str(), dt);
  auto format = py::enum_<Format>(m, "Format");
  for (Format f : {Format::kNCHW, Format::kNHWC, Format::kND, Format::kNC1HWC0, Format::kFractalZ, Format::kNCDHW,
                   Format::kNDHWC, Format::kFractalNZ})
    format.value(("FORMAT_" + std::string(FormatName(f))).c_str(), f);

  m.def(
      "op_types", [] { return OpRegistry::Global().OpTypes(); }, "Every op type in the engine's registry.");
  m.def(
      "op_proto",
      [](const std::string& type) {
        const OpProto* proto = OpRegistry::Global().Find(type);
        if (!proto) throw GeError(fmt::format("op type '{}' is not registered", type));
        const PluginKernel* plugin = FindPluginKernel(type);
        py::list inputs, outputs, attrs;
        for (const auto& in : proto->inputs)
          inputs.append(py::dict(py::arg("name") = in.name, py::arg("kind") = KindName(in.kind)));
        for (const auto& out : proto->outputs) outputs.append(out.name);
        for (const auto& a : proto->attrs)
          attrs.append(py::dict(py::arg("name") = a.name, py::arg("type") = std::string(AttrTypeName(a.type)),
                                py::arg("default") = a.default_value ? FromAttr(*a.default_value) : py::none()));
        return py::dict(py::arg("type") = proto->type, py::arg("inputs") = inputs, py::arg("outputs") = outputs,
                        py::arg("attrs") = attrs, py::arg("doc") = proto->doc,
                        py::arg("dynamic_output") = proto->HasDynamicOutput(),
                        py::arg("framework_op") = proto->framework_op,
                        py::arg("plugin") = plugin ? plugin->library : std::string());
      },
      "The prototype of one op: inputs (name, kind), outputs, attrs (name, type, default), doc, whether its one "
      "output is dynamic (any count), the framework operator it was derived from (custom ops) and the op plugin "
      "library it came from (else empty).");
  m.def(
      "load_op_plugin", [](const std::string& path) { return Unwrap(LoadOpPlugin(path)); }, py::arg("path"),
      "Loads an op plugin library (torchair_ge/include/torchair_ge/op_plugin.h) once; returns the op types it registered.");
  m.def(
      "register_framework_op",
      [](const std::string& type, const std::string& framework_op,
         const std::vector<std::pair<std::string, std::string>>& inputs,
         const std::vector<std::pair<std::string, std::string>>& attrs, const std::vector<std::pair<int, int>>& mutated,
         bool in_place, const std::string& doc) {
        FrameworkOpSpec spec{type, framework_op, {}, {}, mutated, in_place, doc};
        for (const auto& [name, kind] : inputs) spec.inputs.emplace_back(name, ParseKind(kind));
        for (const auto& [name, attr_type] : attrs) spec.attrs.emplace_back(name, ParseAttrType(attr_type));
        ThrowIfError(RegisterFrameworkOp(OpRegistry::Global(), spec));
      },
      py::arg("type"), py::arg("framework_op"), py::arg("inputs"), py::arg("attrs"),
      py::arg("mutated") = std::vector<std::pair<int, int>>{}, py::arg("in_place") = false, py::arg("doc") = "",
      "Registers (or re-checks) an IR op derived from a framework operator's schema (custom ops): tensor arguments as "
      "inputs (name, 'required'|'optional'|'dynamic'), the others as attrs (name, attr type), mutated arguments as "
      "(output, input) pairs updated in place (graph inputs) or as updated copies.");
}

}  // namespace ge::python
