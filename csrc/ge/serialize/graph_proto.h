// Graph <-> ge.proto.GraphDef (csrc/proto/ge_ir.proto): shared by the text dumps (ge_ir_text)
// and the model file (model_file). Only the serialize layer sees the generated proto types.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "ge/ir/graph.h"
#include "ge_ir.pb.h"

namespace ge {

// Writes a constant's bytes into `out` (inline, elided or external: the caller's policy).
using ConstantWriter = std::function<Status(const Tensor& value, proto::TensorDef* out)>;
// Makes a constant of `desc` from what a TensorDef says about its bytes; `where` names it.
using ConstantReader =
    std::function<Expected<Tensor>(const TensorDesc& desc, const proto::TensorDef& def, const std::string& where)>;

void TensorDescToProto(const TensorDesc& desc, proto::TensorDescDef* out);
// Checks every dtype, format and dimension (>= -1); `where` names the owner in errors.
Expected<TensorDesc> TensorDescFromProto(const proto::TensorDescDef& def, const std::string& where);

Expected<proto::GraphDef> GraphToProto(const Graph& graph, const ConstantWriter& write_constant);

// The GraphDef is untrusted: every reference, dtype, shape and attribute is checked, and the
// result is verified.
Expected<std::unique_ptr<Graph>> GraphFromProto(const proto::GraphDef& def, const ConstantReader& read_constant);

}  // namespace ge
