#include "ge/ops/infer_util.h"

#include <limits>

#include <algorithm>

namespace ge {

bool AttentionLeadingDimsCompatible(const Shape& q, const Shape& k, const Shape& v) {
  if (k.size() != q.size() || v.size() != q.size()) return false;
  for (size_t i = 0; i + 2 < q.size(); ++i) {
    const bool heads = q.size() == 4 && i == 1;
    if (k[i] != v[i] || (heads ? k[i] <= 0 || q[i] % k[i] != 0 : q[i] != k[i])) return false;
  }
  return true;
}

Expected<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db)
      out[i] = da;
    else if (da == 1)
      out[i] = db;
    else if (db == 1)
      out[i] = da;
    else if (da < 0 || db < 0)
      out[i] = std::max(da, db) > 1 ? std::max(da, db) : kUnknownDim;
    else
      return InvalidArgument("shapes {} and {} do not broadcast", ShapeToString(a), ShapeToString(b));
  }
  return out;
}

Expected<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  const int64_t bound = std::max<int64_t>(rank, 1);
  GE_CHECK(axis >= -bound && axis < bound, "axis {} is out of range for rank {}", axis, rank);
  return axis < 0 ? axis + bound : axis;
}

int64_t WindowOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad_before, int64_t pad_after,
                         int64_t dilation, bool ceil_mode) {
  if (in < 0) return kUnknownDim;
  // The window's attributes come from the graph (untrusted): nonsense gives size 0, which callers
  // report, and the arithmetic is wide enough that no attribute value overflows it.
  if (kernel < 1 || stride < 1 || dilation < 1 || pad_before < 0 || pad_after < 0) return 0;
  using Wide = __int128;
  const Wide span = Wide{in} + pad_before + pad_after - Wide{dilation} * (kernel - 1) - 1;
  Wide out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // torch's rule: the last window must start inside the input or the leading padding.
  if (ceil_mode && (out - 1) * stride >= Wide{in} + pad_before) --out;
  return out > 0 && out <= std::numeric_limits<int64_t>::max() ? static_cast<int64_t>(out) : 0;
}

Status InferSameAsFirstInput(InferContext& ctx) {
  ctx.Output(0).SetShape(ctx.Input(0).shape);
  return {};
}

Status InferBroadcast(InferContext& ctx) {
  auto shape = BroadcastShapes(ctx.Input(0).shape, ctx.Input(1).shape);
  if (!shape.ok()) return ctx.Error("{}", shape.status().message());
  ctx.Output(0).SetShape(*shape);
  return {};
}

Status InferOutputsFromAttrs(InferContext& ctx) {
  const auto dtypes = ctx.Attr<std::vector<int64_t>>("output_dtypes");
  const auto ranks = ctx.Attr<std::vector<int64_t>>("output_ranks");
  const auto dims = ctx.Attr<std::vector<int64_t>>("output_shapes");
  const int n = ctx.node().num_outputs();
  if (static_cast<int>(dtypes.size()) != n || static_cast<int>(ranks.size()) != n)
    return ctx.Error("output_dtypes/output_ranks describe {}/{} outputs, the node has {}", dtypes.size(), ranks.size(),
                     n);
  size_t next = 0;
  for (int o = 0; o < n; ++o) {
    if (ranks[o] < 0 || next + static_cast<size_t>(ranks[o]) > dims.size())
      return ctx.Error("output_shapes is too short for output {}", o);
    Shape shape(dims.begin() + static_cast<std::ptrdiff_t>(next),
                dims.begin() + static_cast<std::ptrdiff_t>(next + ranks[o]));
    next += static_cast<size_t>(ranks[o]);
    ctx.Output(o).dtype = static_cast<DataType>(dtypes[o]);
    ctx.Output(o).SetShape(std::move(shape));
  }
  if (next != dims.size()) return ctx.Error("output_shapes has {} values, the ranks need {}", dims.size(), next);
  return {};
}

}  // namespace ge
