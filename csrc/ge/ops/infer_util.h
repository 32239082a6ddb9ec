// Shape helpers shared by the InferShape functions.
#pragma once

#include "ge/ops/op_proto.h"
#include "ge/ops/symbolic_infer.h"

namespace ge {

// Numpy-style broadcast of two shapes; -1 dims stay unknown unless the other side fixes them.
Expected<Shape> BroadcastShapes(const Shape& a, const Shape& b);
// Attention's leading dims (all but the last two): equal, except that rank-4 key/value may have
// fewer heads (dim 1) than the query when they divide it (grouped-query attention).
bool AttentionLeadingDimsCompatible(const Shape& q, const Shape& k, const Shape& v);
// Maps a possibly negative axis into [0, rank); fails when out of range.
Expected<int64_t> NormalizeAxis(int64_t axis, int64_t rank);
// Output length of a sliding window (conv/pool) along one dim, floor or ceil, torch's rule; 0 for
// attributes that make no window (kernel, stride or dilation below 1, negative padding).
int64_t WindowOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad_before, int64_t pad_after,
                         int64_t dilation, bool ceil_mode);

// Infer functions used by several ops.
Status InferSameAsFirstInput(InferContext& ctx);
Status InferBroadcast(InferContext& ctx);
// Output descs carried as attrs (output_dtypes, output_ranks, output_shapes = the dims of every
// output back to back): ops whose shapes the engine cannot infer itself (TorchOp, FusedKernel).
Status InferOutputsFromAttrs(InferContext& ctx);

}  // namespace ge
