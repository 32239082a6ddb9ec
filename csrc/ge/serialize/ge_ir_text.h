// `txt` dumps: the text form of our own schema (csrc/proto/ge_ir.proto), and its reader.
#pragma once

#include <memory>
#include <string>

#include "ge/ir/graph.h"

namespace ge {

// Constants larger than this many bytes are dumped without their contents.
inline constexpr int64_t kDumpMaxConstBytes = 1024;

Expected<std::string> GraphToText(const Graph& graph);

// Rebuilds a graph from GraphToText's output. The text is untrusted: every reference,
// dtype, shape and attribute is checked, and the result is verified. A constant whose bytes
// were elided from the dump cannot be rebuilt and is an error naming it, unless
// `zero_elided_constants` asks for zero-filled stand-ins (structure only: right shapes, and the
// same text when dumped again, but not the same numbers).
Expected<std::unique_ptr<Graph>> GraphFromText(const std::string& text, bool zero_elided_constants = false);

}  // namespace ge
