#include "ge/serialize/onnx_export.h"

#include <google/protobuf/text_format.h>

#include "ge/ir/annotations.h"
#include "ge/serialize/ge_ir_text.h"
#include "onnx_model.pb.h"

namespace ge {
namespace {

namespace ox = onnx_dump;

// ONNX TensorProto.DataType numbers.
int OnnxElemType(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat: return 1;
    case DataType::kUInt8: return 2;
    case DataType::kInt8: return 3;
    case DataType::kUInt16: return 4;
    case DataType::kInt16: return 5;
    case DataType::kInt32: return 6;
    case DataType::kInt64: return 7;
    case DataType::kBool: return 9;
    case DataType::kFloat16: return 10;
    case DataType::kDouble: return 11;
    case DataType::kUInt32: return 12;
    case DataType::kUInt64: return 13;
    case DataType::kBFloat16: return 16;
    case DataType::kUndefined: break;
  }
  return 0;
}

std::string ValueName(const Node* node, int index) { return fmt::format("{}:{}", node->name(), index); }

void FillValueInfo(const std::string& name, const TensorDesc& desc, ox::ValueInfoProto* out) {
  out->set_name(name);
  auto* tensor_type = out->mutable_type()->mutable_tensor_type();
  tensor_type->set_elem_type(OnnxElemType(desc.dtype));
  auto* shape = tensor_type->mutable_shape();
  for (int64_t d : desc.shape) {
    auto* dim = shape->add_dim();
    if (d >= 0)
      dim->set_dim_value(d);
    else
      dim->set_dim_param("?");
  }
}

void FillAttribute(const std::string& name, const AttrValue& value, ox::AttributeProto* out) {
  using A = ox::AttributeProto;
  out->set_name(name);
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, bool>) {
          out->set_type(A::INT);
          out->set_i(static_cast<int64_t>(x));
        } else if constexpr (std::is_same_v<T, double>) {
          out->set_type(A::FLOAT);
          out->set_f(static_cast<float>(x));
        } else if constexpr (std::is_same_v<T, std::string>) {
          out->set_type(A::STRING);
          out->set_s(x);
        } else if constexpr (std::is_same_v<T, DataType>) {
          out->set_type(A::STRING);
          out->set_s(std::string(DataTypeName(x)));
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>> || std::is_same_v<T, std::vector<bool>>) {
          out->set_type(A::INTS);
          for (auto v : x) out->add_ints(static_cast<int64_t>(v));
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          out->set_type(A::FLOATS);
          for (double v : x) out->add_floats(static_cast<float>(v));
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          out->set_type(A::STRINGS);
          for (const auto& v : x) out->add_strings(v);
        } else if constexpr (std::is_same_v<T, Tensor>) {
          if (x.nbytes() <= kDumpMaxConstBytes && OnnxElemType(x.desc().dtype) != 0) {
            out->set_type(A::TENSOR);
            auto* t = out->mutable_t();
            for (int64_t d : x.desc().shape) t->add_dims(d);
            t->set_data_type(OnnxElemType(x.desc().dtype));
            t->set_raw_data(x.data(), static_cast<size_t>(x.nbytes()));
          } else {
            out->set_type(A::STRING);
            out->set_s(fmt::format("{} (contents left out: {} bytes)", x.desc().ToString(), x.nbytes()));
          }
        }
      },
      value);
}

ox::ModelProto BuildModel(const Graph& graph, const std::vector<Node*>& order) {
  ox::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("torchair_ge");
  model.set_doc_string("torchair_ge graph dump; ops of domain ai.torchair_ge are listed in docs/ops.md");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  opset = model.add_opset_import();
  opset->set_domain(kOnnxDomain);
  opset->set_version(1);

  ox::GraphProto* g = model.mutable_graph();
  g->set_name(graph.name());
  for (Node* data : graph.DataNodes()) FillValueInfo("input_" + data->name(), data->output_desc(0), g->add_input());

  for (Node* node : order) {
    ox::NodeProto* n = g->add_node();
    n->set_name(node->name());
    n->set_op_type(node->type());
    n->set_domain(kOnnxDomain);
    if (node->type() == kOpData) n->add_input("input_" + node->name());
    for (Value v : node->inputs()) n->add_input(v.valid() ? ValueName(v.node, v.index) : std::string());
    if (node->type() == kOpNetOutput) {
      for (int i = 0; i < node->num_inputs(); ++i) {
        const std::string name = fmt::format("output_{}", i);
        n->add_output(name);
        Value v = node->input(i);
        FillValueInfo(name, v.node->output_desc(v.index), g->add_output());
      }
    }
    for (int o = 0; o < node->num_outputs(); ++o) {
      n->add_output(ValueName(node, o));
      FillValueInfo(ValueName(node, o), node->output_desc(o), g->add_value_info());
    }
    for (const auto& [key, value] : node->attrs()) {
      if (key == kAttrSource) {
        n->set_doc_string(std::get_if<std::string>(&value) ? std::get<std::string>(value) : AttrToString(value));
        continue;
      }
      if (!key.empty() && key[0] == '_') {  // compile annotations: metadata, shown by Netron
        auto* prop = n->add_metadata_props();
        prop->set_key(key);
        const auto* text = std::get_if<std::string>(&value);
        prop->set_value(text ? *text : AttrToString(value));
        continue;
      }
      FillAttribute(key, value, n->add_attribute());
    }
    for (Node* c : node->control_inputs()) {
      auto* prop = n->add_metadata_props();
      prop->set_key("control_input");
      prop->set_value(c->name());
    }
  }
  return model;
}

}  // namespace

Expected<std::string> GraphToOnnx(const Graph& graph) {
  GE_ASSIGN_OR_RETURN(auto order, graph.TopologicalOrder());
  std::string bytes;
  if (!BuildModel(graph, order).SerializeToString(&bytes))
    return Internal("could not serialize graph '{}' as ONNX", graph.name());
  return bytes;
}

Expected<std::string> GraphToOnnxText(const Graph& graph) {
  GE_ASSIGN_OR_RETURN(auto order, graph.TopologicalOrder());
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(BuildModel(graph, order), &text))
    return Internal("could not print graph '{}' as ONNX text", graph.name());
  return text;
}

}  // namespace ge
