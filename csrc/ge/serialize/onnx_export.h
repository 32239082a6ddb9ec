// `onnx` and `pbtxt` dumps: the graph as an ONNX ModelProto, for Netron and onnx tools.
//
// Mapping: every IR node becomes one ONNX node of domain "ai.torchair_ge" whose op_type is the
// IR type (Data and NetOutput included, so node counts match the IR); graph inputs/outputs and
// every value get typed ValueInfos; attributes keep their names (ints/bools -> INT, reals ->
// FLOAT, strings/dtypes -> STRING, lists -> INTS/FLOATS/STRINGS, constants -> TENSOR, or a
// shape-only note when larger than kDumpMaxConstBytes). Compile annotations (engine, stream,
// memory, FX origin) are node metadata_props, the source line is the node's doc_string.
#pragma once

#include <string>

#include "ge/ir/graph.h"

namespace ge {

inline constexpr const char* kOnnxDomain = "ai.torchair_ge";

// The serialized (binary) ModelProto.
Expected<std::string> GraphToOnnx(const Graph& graph);
// The same model in protobuf text format.
Expected<std::string> GraphToOnnxText(const Graph& graph);

}  // namespace ge
