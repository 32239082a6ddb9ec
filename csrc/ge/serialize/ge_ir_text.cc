#include "ge/serialize/ge_ir_text.h"

#include <cstring>

#include <google/protobuf/text_format.h>

#include "ge/serialize/graph_proto.h"

namespace ge {

Expected<std::string> GraphToText(const Graph& graph) {
  // Dumps keep small constants' bytes and leave out the rest.
  const ConstantWriter write = [](const Tensor& value, proto::TensorDef* out) -> Status {
    if (value.nbytes() <= kDumpMaxConstBytes)
      out->set_data(value.data(), static_cast<size_t>(value.nbytes()));
    else
      out->set_data_elided(true);
    return {};
  };
  GE_ASSIGN_OR_RETURN(proto::GraphDef def, GraphToProto(graph, write));
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(def, &text))
    return Internal("could not print graph '{}'", graph.name());
  return text;
}

Expected<std::unique_ptr<Graph>> GraphFromText(const std::string& text, bool zero_elided_constants) {
  proto::GraphDef def;
  GE_CHECK(google::protobuf::TextFormat::ParseFromString(text, &def), "graph text does not parse as ge.proto.GraphDef");
  const ConstantReader read = [zero_elided_constants](const TensorDesc& desc, const proto::TensorDef& t,
                                                      const std::string& where) -> Expected<Tensor> {
    GE_CHECK(!t.has_external(), "{}: a graph text cannot refer to a weights file", where);
    GE_CHECK(!t.data_elided() || zero_elided_constants,
             "{}: the dump left out this constant's bytes (larger than {} bytes)", where, kDumpMaxConstBytes);
    Tensor value = Tensor::Allocate(desc);  // zero-filled: the stand-in for elided bytes
    if (t.data_elided()) return value;
    GE_CHECK(static_cast<int64_t>(t.data().size()) == desc.ByteSize(), "{}: constant holds {} bytes, {} expected",
             where, t.data().size(), desc.ByteSize());
    if (!t.data().empty()) std::memcpy(value.data(), t.data().data(), t.data().size());
    return value;
  };
  auto graph = GraphFromProto(def, read);
  if (!graph.ok()) return graph.status().WithContext("graph read from text");
  return graph;
}

}  // namespace ge
