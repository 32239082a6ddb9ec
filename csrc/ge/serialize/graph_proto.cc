#include "ge/serialize/graph_proto.h"

#include <cstring>

namespace ge {
namespace {

Status FillAttr(const AttrValue& value, proto::AttrDef* out, const ConstantWriter& write_constant) {
  Status status;
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>)
          out->set_i(x);
        else if constexpr (std::is_same_v<T, double>)
          out->set_f(x);
        else if constexpr (std::is_same_v<T, bool>)
          out->set_b(x);
        else if constexpr (std::is_same_v<T, std::string>)
          out->set_s(x);
        else if constexpr (std::is_same_v<T, DataType>)
          out->set_dtype(std::string(DataTypeName(x)));
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          out->set_list_type("int");
          for (auto v : x) out->mutable_list()->add_i(v);
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          out->set_list_type("float");
          for (auto v : x) out->mutable_list()->add_f(v);
        } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
          out->set_list_type("bool");
          for (bool v : x) out->mutable_list()->add_b(v);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          out->set_list_type("string");
          for (const auto& v : x) out->mutable_list()->add_s(v);
        } else if constexpr (std::is_same_v<T, Tensor>) {
          auto* t = out->mutable_tensor();
          TensorDescToProto(x.desc(), t->mutable_desc());
          status = write_constant(x, t);
        }
      },
      value);
  return status;
}

Expected<Tensor> ReadConstant(const proto::TensorDef& t, const std::string& where, const ConstantReader& read) {
  GE_ASSIGN_OR_RETURN(TensorDesc desc, TensorDescFromProto(t.desc(), where));
  for (int64_t d : desc.shape) GE_CHECK(d >= 0, "{}: constant with unknown dimension", where);
  GE_CHECK(desc.ByteSize() <= (int64_t{1} << 34), "{}: constant of {} bytes is implausible", where, desc.ByteSize());
  return read(desc, t, where);
}

Expected<AttrValue> ReadAttr(const proto::AttrDef& def, const std::string& where, const ConstantReader& read) {
  switch (def.value_case()) {
    case proto::AttrDef::kI: return AttrValue(def.i());
    case proto::AttrDef::kF: return AttrValue(def.f());
    case proto::AttrDef::kB: return AttrValue(def.b());
    case proto::AttrDef::kS: return AttrValue(def.s());
    case proto::AttrDef::kDtype: {
      GE_ASSIGN_OR_RETURN(DataType dt, ParseDataType(def.dtype()));
      return AttrValue(dt);
    }
    case proto::AttrDef::kList: {
      const auto& l = def.list();
      const std::string& kind = def.list_type();
      if (kind == "int") return AttrValue(std::vector<int64_t>(l.i().begin(), l.i().end()));
      if (kind == "float") return AttrValue(std::vector<double>(l.f().begin(), l.f().end()));
      if (kind == "bool") return AttrValue(std::vector<bool>(l.b().begin(), l.b().end()));
      if (kind == "string") return AttrValue(std::vector<std::string>(l.s().begin(), l.s().end()));
      return InvalidArgument("{}: unknown list_type '{}'", where, kind);
    }
    case proto::AttrDef::kTensor: {
      GE_ASSIGN_OR_RETURN(Tensor value, ReadConstant(def.tensor(), where, read));
      return AttrValue(std::move(value));
    }
    case proto::AttrDef::VALUE_NOT_SET: {
      // An empty list prints as its list_type alone (an empty submessage is not written).
      const std::string& kind = def.list_type();
      if (kind == "int") return AttrValue(std::vector<int64_t>{});
      if (kind == "float") return AttrValue(std::vector<double>{});
      if (kind == "bool") return AttrValue(std::vector<bool>{});
      if (kind == "string") return AttrValue(std::vector<std::string>{});
      break;
    }
  }
  return InvalidArgument("{}: attribute has no value", where);
}

// "producer:index" -> the Value, which must come from an earlier node.
Expected<Value> ReadInput(const Graph& graph, const std::string& ref, const std::string& where) {
  const size_t colon = ref.rfind(':');
  GE_CHECK(colon != std::string::npos, "{}: input '{}' is not 'node:output'", where, ref);
  Node* producer = graph.FindNode(ref.substr(0, colon));
  GE_CHECK(producer != nullptr, "{}: input '{}' names no earlier node", where, ref);
  int index = -1;
  try {
    index = std::stoi(ref.substr(colon + 1));
  } catch (const std::exception&) {
  }
  GE_CHECK(index >= 0 && index < producer->num_outputs(), "{}: input '{}': {} has no output {}", where, ref,
           producer->name(), ref.substr(colon + 1));
  return Value{producer, index};
}

Status ReadOp(const proto::OpDef& op, const ConstantReader& read, Graph* graph) {
  const std::string where = fmt::format("op '{}' ({})", op.name(), op.type());
  GE_CHECK(!op.name().empty() && !op.type().empty(), "an op of the graph has no name or type");
  GE_CHECK(graph->FindNode(op.name()) == nullptr, "{}: duplicate node name", where);
  std::vector<Value> inputs;
  for (const std::string& ref : op.input()) {
    if (ref.empty()) {
      inputs.push_back(Value{});
      continue;
    }
    GE_ASSIGN_OR_RETURN(Value v, ReadInput(*graph, ref, where));
    inputs.push_back(v);
  }
  Node* node = graph->AddNode(op.type(), op.name(), inputs, op.output_desc_size());
  GE_CHECK(node->name() == op.name(), "{}: name is not usable", where);
  for (int o = 0; o < op.output_desc_size(); ++o) {
    GE_ASSIGN_OR_RETURN(node->output_desc(o), TensorDescFromProto(op.output_desc(o), where));
  }
  for (const auto& [key, value] : op.attr()) {
    GE_ASSIGN_OR_RETURN(AttrValue attr, ReadAttr(value, fmt::format("{} attribute '{}'", where, key), read));
    node->SetAttr(key, std::move(attr));
  }
  for (const std::string& control : op.control_input()) {
    Node* src = graph->FindNode(control);
    GE_CHECK(src != nullptr, "{}: control input '{}' names no earlier node", where, control);
    graph->AddControlEdge(src, node);
  }
  return {};
}

}  // namespace

void TensorDescToProto(const TensorDesc& desc, proto::TensorDescDef* out) {
  out->set_dtype(std::string(DataTypeName(desc.dtype)));
  for (int64_t d : desc.shape) out->add_shape(d);
  out->set_format(std::string(FormatName(desc.format)));
  for (int64_t d : desc.origin_shape) out->add_origin_shape(d);
  out->set_origin_format(std::string(FormatName(desc.origin_format)));
}

Expected<TensorDesc> TensorDescFromProto(const proto::TensorDescDef& def, const std::string& where) {
  TensorDesc desc;
  GE_ASSIGN_OR_RETURN(desc.dtype, ParseDataType(def.dtype()));
  for (int64_t d : def.shape()) {
    GE_CHECK(d >= -1, "{}: invalid dimension {}", where, d);
    desc.shape.push_back(d);
  }
  if (!def.format().empty()) {
    GE_ASSIGN_OR_RETURN(desc.format, ParseFormat(def.format()));
  }
  desc.origin_shape.assign(def.origin_shape().begin(), def.origin_shape().end());
  if (!def.origin_format().empty()) {
    GE_ASSIGN_OR_RETURN(desc.origin_format, ParseFormat(def.origin_format()));
  } else if (def.origin_shape().empty()) {
    // A desc written without its origin (by hand; the engine always writes it) is what the
    // framework sees as is, as a TensorDesc built from a shape and a format.
    desc.origin_shape = desc.shape;
    desc.origin_format = desc.format;
  }
  return desc;
}

Expected<proto::GraphDef> GraphToProto(const Graph& graph, const ConstantWriter& write_constant) {
  proto::GraphDef def;
  def.set_name(graph.name());
  GE_ASSIGN_OR_RETURN(auto order, graph.TopologicalOrder());
  for (Node* node : order) {
    proto::OpDef* op = def.add_op();
    op->set_name(node->name());
    op->set_type(node->type());
    for (Value v : node->inputs())
      op->add_input(v.valid() ? fmt::format("{}:{}", v.node->name(), v.index) : std::string());
    for (Node* c : node->control_inputs()) op->add_control_input(c->name());
    for (const auto& [key, value] : node->attrs())
      GE_RETURN_IF_ERROR(FillAttr(value, &(*op->mutable_attr())[key], write_constant)
                             .WithContext(fmt::format("node '{}' attribute '{}'", node->name(), key)));
    for (int o = 0; o < node->num_outputs(); ++o) TensorDescToProto(node->output_desc(o), op->add_output_desc());
  }
  return def;
}

Expected<std::unique_ptr<Graph>> GraphFromProto(const proto::GraphDef& def, const ConstantReader& read_constant) {
  auto graph = std::make_unique<Graph>(def.name().empty() ? "graph" : def.name());
  for (const proto::OpDef& op : def.op()) GE_RETURN_IF_ERROR(ReadOp(op, read_constant, graph.get()));
  GE_RETURN_IF_ERROR(graph->Verify());
  return graph;
}

}  // namespace ge
