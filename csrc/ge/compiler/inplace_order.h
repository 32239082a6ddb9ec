#pragma once
#include "ge/ir/graph.h"

namespace ge {

// For every node that updates an input in place (OpProto::inplace), every other reader of
// that input's value must run before the update: adds control edges reader -> update. A
// reader that also depends on the update (it would need the old and the new value at once)
// is an error naming both nodes. Part of the prepare stage.
Status OrderInplaceUpdates(Graph& graph);

// Collectives (OpProto::communicates) run in the order the graph was built, which is the
// program order on every rank: a chain of control edges from each to the next. Two ranks that
// scheduled independent collectives differently would each wait for the other's first one.
void OrderCollectives(Graph& graph);

}  // namespace ge
