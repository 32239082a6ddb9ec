#include "ge/serialize/graph_dump.h"

#include <filesystem>
#include <fstream>

#include <google/protobuf/text_format.h>

#include "ge_ir.pb.h"

namespace ge {
namespace {

void FillDesc(const TensorDesc& desc, proto::TensorDescDef* out) {
  out->set_dtype(std::string(DataTypeName(desc.dtype)));
  for (int64_t d : desc.shape) out->add_shape(d);
  out->set_format(std::string(FormatName(desc.format)));
  for (int64_t d : desc.origin_shape) out->add_origin_shape(d);
  out->set_origin_format(std::string(FormatName(desc.origin_format)));
}

void FillAttr(const AttrValue& value, proto::AttrDef* out) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) out->set_i(x);
        else if constexpr (std::is_same_v<T, double>) out->set_f(x);
        else if constexpr (std::is_same_v<T, bool>) out->set_b(x);
        else if constexpr (std::is_same_v<T, std::string>) out->set_s(x);
        else if constexpr (std::is_same_v<T, DataType>) out->set_dtype(std::string(DataTypeName(x)));
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
          FillDesc(x.desc(), t->mutable_desc());
          if (x.nbytes() <= kDumpMaxConstBytes) t->set_data(x.data(), static_cast<size_t>(x.nbytes()));
          else t->set_data_elided(true);
        }
      },
      value);
}

}  // namespace

Expected<std::string> GraphToText(const Graph& graph) {
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
    for (const auto& [key, value] : node->attrs()) FillAttr(value, &(*op->mutable_attr())[key]);
    for (int o = 0; o < node->num_outputs(); ++o) FillDesc(node->output_desc(o), op->add_output_desc());
  }
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(def, &text)) return Internal("could not print graph '{}'", graph.name());
  return text;
}

Status DumpGraph(const Graph& graph, const std::string& format, const std::string& dir, const std::string& file_name) {
  GE_CHECK(format == "txt", "graph dump format '{}' is not supported (supported: txt)", format);
  GE_ASSIGN_OR_RETURN(std::string text, GraphToText(graph));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  GE_CHECK(!ec, "cannot create dump directory '{}': {}", dir, ec.message());
  const std::filesystem::path target = std::filesystem::path(dir) / file_name;
  const std::filesystem::path tmp = target.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    GE_CHECK(out.good(), "cannot write '{}'", tmp.string());
  }
  std::filesystem::rename(tmp, target, ec);
  GE_CHECK(!ec, "cannot rename '{}' to '{}': {}", tmp.string(), target.string(), ec.message());
  return {};
}

}  // namespace ge
