// Graph dumps in every supported format, and the dump-file naming used by the compiler.
//   txt    text proto of our own schema (csrc/proto/ge_ir.proto); parses back (GraphFromText)
//   onnx   binary ONNX ModelProto (Netron, onnx.checker)
//   pbtxt  the same ONNX model as protobuf text
//   py     a Python script of GraphBuilder calls that rebuilds the graph
//   dot    Graphviz source (engine / stream / fused-group colours)
#pragma once

#include <string>
#include <vector>

#include "ge/ir/graph.h"
#include "ge/serialize/ge_ir_text.h"

namespace ge {

enum class DumpFormat { kTxt, kOnnx, kPbtxt, kPy, kDot };

// Parses one format name.
Expected<DumpFormat> ParseDumpFormat(std::string_view name);
// Parses "txt", "onnx,dot", ... (comma separated, no duplicates).
Expected<std::vector<DumpFormat>> ParseDumpFormats(std::string_view names);
std::string_view DumpFormatName(DumpFormat format);  // also the file extension

// Writes `graph` as `dir/<stem>.<ext>` (plus `<stem>.bin` for a py dump with large constants),
// atomically, never replacing an existing file (a numeric suffix is added). Returns the path.
Expected<std::string> DumpGraph(const Graph& graph, DumpFormat format, const std::string& dir, const std::string& stem);

}  // namespace ge
