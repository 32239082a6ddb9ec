#pragma once
#include "ge/ir/graph.h"

namespace ge {

// Stage "prepare": structural verification, every node's inputs present as its prototype
// says (OpRegistry::VerifyInputs), readers of values updated in place ordered
// before the update (OrderInplaceUpdates), then every node (in topological order) checked
// against its prototype and re-inferred. Output descs that were already set (by the builder
// or the frontend's metas) must agree with inference. Graph inputs must have static shapes.
Status PrepareGraph(Graph& graph);

}  // namespace ge
