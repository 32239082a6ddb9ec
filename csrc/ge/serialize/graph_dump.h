// Graph dumps. `txt` is the text form of our ge_ir.proto (csrc/proto).
#pragma once

#include <string>

#include "ge/ir/graph.h"

namespace ge {

// Constants larger than this many bytes are dumped without their contents.
inline constexpr int64_t kDumpMaxConstBytes = 1024;

Expected<std::string> GraphToText(const Graph& graph);
// Writes `graph` to `dir/<file_name>` (creating `dir`), atomically.
Status DumpGraph(const Graph& graph, const std::string& format, const std::string& dir, const std::string& file_name);

}  // namespace ge
