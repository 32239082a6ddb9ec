// Epilogues a library kernel applies itself: MatMulV2 followed by an activation becomes one
// FusedMatMul, whose device kernel applies the activation while the product is still in cache
// (on the CPU device: a oneDNN post-op, or the activation in place right after at::mm); a
// channels-last float Conv2D followed by a residual Add and/or an activation becomes one
// FusedConv2D (on the CPU device: oneDNN's post-ops, writing the task's output once). Runs
// before grouping, so generated kernels only take what the library cannot do as well: exact
// GELU in particular is far cheaper as oneDNN's post-op than as generated code (docs/autofuse.md).
#pragma once

#include "ge/ir/graph.h"

namespace ge::autofuse {

// Folds every eligible MatMulV2 -> activation pair and Conv2D -> [Add] -> [activation] chain;
// returns how many.
Expected<int> FoldLibraryEpilogues(Graph& graph);

}  // namespace ge::autofuse
