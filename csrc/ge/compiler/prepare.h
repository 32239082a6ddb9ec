#pragma once
#include "ge/ir/graph.h"

namespace ge {

// Stage "prepare": structural verification, readers of values updated in place ordered
// before the update (OrderInplaceUpdates), then every node (in topological order) checked
// against its prototype and re-inferred. Output descs that were already set (by the builder
// or the frontend's metas) must agree with inference. Graph inputs must have static shapes.
Status PrepareGraph(Graph& graph);

}  // namespace ge
