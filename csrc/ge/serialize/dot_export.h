// `dot` dumps: Graphviz source. Fill colour = engine, border colour = stream, one cluster per
// fused group; labels carry type, name, output shape/dtype and the arena slot when assigned.
#pragma once

#include <string>

#include "ge/ir/graph.h"

namespace ge {

Expected<std::string> GraphToDot(const Graph& graph);

}  // namespace ge
