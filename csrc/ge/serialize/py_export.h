// `py` dumps: a Python script of torchair_ge._C.GraphBuilder calls that rebuilds the graph.
// Running it (`python file.py`) builds the graph and prints its size; `build()` returns it for
// a Session. Constants up to kPyInlineConstBytes are written inline; larger ones go to a
// sidecar file of raw bytes next to the script, read back by offset.
// Compile annotations (engine, stream, memory) are not replayed: compiling recomputes them;
// the FX origin (_fx_node, _source) is.
#pragma once

#include <string>

#include "ge/ir/graph.h"

namespace ge {

inline constexpr int64_t kPyInlineConstBytes = 4096;

struct PyDump {
  std::string script;
  std::string sidecar;  // raw bytes of large constants; empty when none
};

// `sidecar_name` is the file name (same directory) the script reads large constants from.
Expected<PyDump> GraphToPython(const Graph& graph, const std::string& sidecar_name);

}  // namespace ge
