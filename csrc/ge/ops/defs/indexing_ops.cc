// Indexing and data movement: BroadcastTo, GatherV2, StridedSliceV2, Pack with constant
// parameters; Index/IndexPut (torch's advanced indexing with index tensors) and Histc.
#include <algorithm>
#include <cmath>
#include <optional>

#include "ge/ops/infer_util.h"
#include "ge/ops/op_registry.h"

namespace ge {
namespace {

Expected<std::vector<int64_t>> ConstValues(InferContext& ctx, int input, const char* what) {
  const Tensor* t = ctx.ConstInput(input);
  if (!t) return ctx.Error("{} must be a constant", what);
  auto values = t->ToInt64Vector();
  if (!values.ok()) return ctx.Error("{}: {}", what, values.status().message());
  return values;
}

Status InferBroadcastTo(InferContext& ctx) {
  GE_ASSIGN_OR_RETURN(Shape target, ConstValues(ctx, 1, "shape"));
  const Shape& x = ctx.Input(0).shape;
  if (target.size() < x.size())
    return ctx.Error("cannot broadcast {} to fewer dims {}", ShapeToString(x), ShapeToString(target));
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t xd = x[x.size() - 1 - i], td = target[target.size() - 1 - i];
    if (td < 0) return ctx.Error("shape {} has a negative dim", ShapeToString(target));
    if (xd != td && xd != 1) return ctx.Error("cannot broadcast {} to {}", ShapeToString(x), ShapeToString(target));
  }
  ctx.Output(0).SetShape(target);
  return {};
}

Status InferGatherV2(InferContext& ctx) {
  const Shape& x = ctx.Input(0).shape;
  GE_ASSIGN_OR_RETURN(std::vector<int64_t> axis_values, ConstValues(ctx, 2, "axis"));
  if (axis_values.size() != 1) return ctx.Error("axis must hold one value");
  auto axis = NormalizeAxis(axis_values[0], static_cast<int64_t>(x.size()));
  if (!axis.ok() || x.empty()) return ctx.Error("axis {} is out of range for {}", axis_values[0], ShapeToString(x));
  if (ctx.Attr<int64_t>("batch_dims") != 0) return ctx.Error("batch_dims other than 0 are not supported");
  Shape out(x.begin(), x.begin() + *axis);
  const Shape& indices = ctx.Input(1).shape;
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), x.begin() + *axis + 1, x.end());
  ctx.Output(0).SetShape(out);
  return {};
}

Status InferStridedSliceV2(InferContext& ctx) {
  const Shape& x = ctx.Input(0).shape;
  GE_ASSIGN_OR_RETURN(std::vector<int64_t> begin, ConstValues(ctx, 1, "begin"));
  GE_ASSIGN_OR_RETURN(std::vector<int64_t> end, ConstValues(ctx, 2, "end"));
  GE_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ConstValues(ctx, 3, "axes"));
  GE_ASSIGN_OR_RETURN(std::vector<int64_t> strides, ConstValues(ctx, 4, "strides"));
  if (begin.size() != axes.size() || end.size() != axes.size() || strides.size() != axes.size())
    return ctx.Error("begin, end, axes and strides must have one entry per sliced axis");
  Shape out = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    auto axis = NormalizeAxis(axes[i], static_cast<int64_t>(x.size()));
    if (!axis.ok()) return ctx.Error("axes: {}", axis.status().message());
    if (strides[i] <= 0)
      return ctx.Error("stride {} on axis {}: only positive strides are supported", strides[i], *axis);
    const int64_t dim = x[static_cast<size_t>(*axis)];
    auto clamp = [dim](int64_t v) { return std::clamp(v < 0 ? v + dim : v, int64_t{0}, dim); };
    const int64_t b = clamp(begin[i]), e = clamp(end[i]);
    out[static_cast<size_t>(*axis)] = e > b ? (e - b + strides[i] - 1) / strides[i] : 0;
  }
  ctx.Output(0).SetShape(out);
  return {};
}

Status InferPack(InferContext& ctx) {
  const int n = ctx.NumDynamic();
  if (n < 1 || ctx.Attr<int64_t>("N") != n)
    return ctx.Error("attr N = {} but {} inputs are given", ctx.Attr<int64_t>("N"), n);
  const Shape& first = ctx.Dynamic(0).shape;
  for (int k = 1; k < n; ++k)
    if (ctx.Dynamic(k).shape != first)
      return ctx.Error("input {} has shape {}, input 0 {}", k, ShapeToString(ctx.Dynamic(k).shape),
                       ShapeToString(first));
  auto axis = NormalizeAxis(ctx.Attr<int64_t>("axis"), static_cast<int64_t>(first.size()) + 1);
  if (!axis.ok()) return ctx.Error("axis: {}", axis.status().message());
  Shape out = first;
  out.insert(out.begin() + *axis, n);
  ctx.Output(0).SetShape(out);
  return {};
}

// The dims of x that index tensors select: strictly increasing, one per index tensor.
Status CheckIndexedDims(InferContext& ctx, const std::vector<int64_t>& dims, int rank) {
  if (dims.empty() || static_cast<int>(dims.size()) != ctx.NumDynamic())
    return ctx.Error("indexed_dims has {} entries for {} index tensors", dims.size(), ctx.NumDynamic());
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] < 0 || dims[k] >= rank || (k > 0 && dims[k] <= dims[k - 1]))
      return ctx.Error("indexed_dims {} must be increasing dims of a rank-{} input", ShapeToString(dims), rank);
  }
  return {};
}

// torch's advanced indexing: the index tensors broadcast to one shape B; when the indexed dims
// are adjacent, B replaces them in place, otherwise B comes first and the other dims follow.
Status InferIndex(InferContext& ctx) {
  const Shape& x = ctx.Input(0).shape;
  const auto dims = ctx.Attr<std::vector<int64_t>>("indexed_dims");
  GE_RETURN_IF_ERROR(CheckIndexedDims(ctx, dims, static_cast<int>(x.size())));
  Shape b = ctx.Dynamic(0).shape;
  for (int k = 1; k < ctx.NumDynamic(); ++k) {
    auto merged = BroadcastShapes(b, ctx.Dynamic(k).shape);
    if (!merged.ok()) return ctx.Error("index tensors do not broadcast: {}", merged.status().message());
    b = *merged;
  }
  const bool adjacent = dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size());
  Shape out = adjacent ? Shape(x.begin(), x.begin() + dims.front()) : Shape{};
  out.insert(out.end(), b.begin(), b.end());
  for (int64_t d = adjacent ? dims.back() + 1 : 0; d < static_cast<int64_t>(x.size()); ++d)
    if (adjacent || std::find(dims.begin(), dims.end(), d) == dims.end()) out.push_back(x[static_cast<size_t>(d)]);
  ctx.Output(0).SetShape(out);
  return {};
}

Status InferIndexPut(InferContext& ctx) {
  const auto dims = ctx.Attr<std::vector<int64_t>>("indexed_dims");
  GE_RETURN_IF_ERROR(CheckIndexedDims(ctx, dims, static_cast<int>(ctx.Input(0).shape.size())));
  ctx.Output(0).SetShape(ctx.Input(0).shape);
  return {};
}

Status InferHistc(InferContext& ctx) {
  const int64_t bins = ctx.Attr<int64_t>("bins");
  if (bins <= 0) return ctx.Error("bins = {} must be positive", bins);
  if (ctx.Attr<double>("min") > ctx.Attr<double>("max"))
    return ctx.Error("min {} is above max {}", ctx.Attr<double>("min"), ctx.Attr<double>("max"));
  ctx.Output(0).SetShape({bins});
  return {};
}

// A 0-d int32/int64/float32/float64 constant's value, or nullopt.
std::optional<double> ScalarConst(const Tensor* t) {
  if (t == nullptr || t->desc().rank() != 0) return std::nullopt;
  switch (t->desc().dtype) {
    case DataType::kInt32: return static_cast<double>(*t->data_as<int32_t>());
    case DataType::kInt64: return static_cast<double>(*t->data_as<int64_t>());
    case DataType::kFloat: return static_cast<double>(*t->data_as<float>());
    case DataType::kDouble: return *t->data_as<double>();
    default: return std::nullopt;
  }
}

// torch.arange's length: ceil((limit - start) / delta), computed in double as torch does.
Status InferRange(InferContext& ctx) {
  for (int i = 0; i < 3; ++i)
    if (ctx.Input(i).rank() != 0) return ctx.Error("input {} must be 0-d, got {}", i, ctx.Input(i).ToString());
  const auto start = ScalarConst(ctx.ConstInput(0));
  const auto limit = ScalarConst(ctx.ConstInput(1));
  const auto delta = ScalarConst(ctx.ConstInput(2));
  if (!start || !limit || !delta) {
    ctx.Output(0).SetShape({kUnknownDim});
    return {};
  }
  if (!std::isfinite(*start) || !std::isfinite(*limit) || !std::isfinite(*delta) || *delta == 0)
    return ctx.Error("start {}, limit {}, delta {} do not make a range", *start, *limit, *delta);
  const double length = std::ceil((*limit - *start) / *delta);
  if (length < 0) return ctx.Error("limit {} is not reachable from start {} with delta {}", *limit, *start, *delta);
  if (length > 1e15) return ctx.Error("a range of {} elements is too long", length);
  ctx.Output(0).SetShape({static_cast<int64_t>(length)});
  return {};
}

// torch's advanced indexing (index tensors, data-dependent positions) and histograms.
// Symbolic forms of the rules above (the node is verified; see ops/symbolic_infer.h).
using SymOp = SymExpr::Op;

void InferSymbolicBroadcastTo(SymbolicInferContext& ctx) {
  if (std::optional<SymDims> target = ctx.ConstSizes(1)) ctx.SetOutput(0, std::move(*target));
}

void InferSymbolicGatherV2(SymbolicInferContext& ctx) {
  const SymDims& x = ctx.Dims(0);
  const SymDims& indices = ctx.Dims(1);
  std::optional<SymDims> axis_values = ctx.ConstSizes(2);
  if (x.empty() || (indices.empty() && ctx.Input(1).rank() > 0) || !axis_values || axis_values->size() != 1) return;
  const std::optional<size_t> at = ctx.AxisValue((*axis_values)[0], x.size());
  if (!at) return;
  const auto axis = static_cast<std::ptrdiff_t>(*at);
  SymDims out(x.begin(), x.begin() + axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), x.begin() + axis + 1, x.end());
  ctx.SetOutput(0, std::move(out));
}

// A slice bound as torch takes it: negative counts from the end, then clamped to [0, dim]. Which
// case applies is decided at the graph's sizes (the result is checked there, and re-derived per size).
std::optional<SymExpr> SliceBound(const SymbolicInferContext& ctx, const SymExpr& bound, const SymExpr& dim) {
  const std::optional<int64_t> value = ctx.Value(bound);
  if (!value) return std::nullopt;
  const int64_t at = *value;
  if (at >= INT64_MAX / 2) return dim;  // "to the end"
  if (at == 0) return bound;
  if (at < 0) {
    const SymExpr from_end = bound.IsConstant() ? SymExpr::Combine(SymOp::kSub, dim, SymExpr::Constant(-at))
                                                : SymExpr::Combine(SymOp::kAdd, dim, bound);
    return SymExpr::Combine(SymOp::kMax, from_end, SymExpr::Constant(0));
  }
  return SymExpr::Combine(SymOp::kMin, bound, dim);
}

void InferSymbolicStridedSliceV2(SymbolicInferContext& ctx) {
  SymDims out = ctx.Dims(0);
  std::optional<SymDims> begin = ctx.ConstSizes(1), end = ctx.ConstSizes(2), axes = ctx.ConstSizes(3),
                         strides = ctx.ConstSizes(4);
  if (out.empty() || !begin || !end || !axes || !strides) return;
  const size_t n = axes->size();
  if (begin->size() != n || end->size() != n || strides->size() != n) return;
  for (size_t i = 0; i < n; ++i) {
    const std::optional<size_t> at = ctx.AxisValue((*axes)[i], out.size());
    if (!at) return;
    const size_t axis = *at;
    const std::optional<SymExpr> begin_bound = SliceBound(ctx, (*begin)[i], out[axis]);
    const std::optional<SymExpr> end_bound = SliceBound(ctx, (*end)[i], out[axis]);
    if (!begin_bound || !end_bound) return;
    const SymExpr &b = *begin_bound, &e = *end_bound;
    const SymExpr& step = (*strides)[i];
    // ceil((e - b) / step), or 0 when e <= b; with b = 0 the span is never negative, and the last
    // k elements (x[-k:]) span min(k, dim).
    const int64_t first = *ctx.Value((*begin)[i]);
    SymExpr span = e == out[axis] && (*begin)[i].IsConstant() && first < 0
                       ? SymExpr::Combine(SymOp::kMin, SymExpr::Constant(-first), out[axis])
                       : SymExpr::Combine(SymOp::kSub, e, b);
    span = SymExpr::Combine(SymOp::kAdd, span, SymExpr::Combine(SymOp::kSub, step, SymExpr::Constant(1)));
    SymExpr length = SymExpr::Combine(SymOp::kFloorDiv, span, step);
    if (b.ConstantValue() != 0 && !(e == out[axis] && first < 0))
      length = SymExpr::Combine(SymOp::kMax, length, SymExpr::Constant(0));
    out[axis] = length;
  }
  ctx.SetOutput(0, std::move(out));
}

void InferSymbolicPack(SymbolicInferContext& ctx) {
  SymDims out = ctx.DynamicDims(0);
  if (out.empty() && ctx.Dynamic(0).rank() > 0) return;
  const std::optional<size_t> axis = NormalizedAxis(ctx.Attr<int64_t>("axis"), out.size() + 1);
  if (!axis) return;
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(*axis), SymExpr::Constant(ctx.NumDynamic()));
  ctx.SetOutput(0, std::move(out));
}

// Integer ranges only: ceil((limit - start) / delta).
void InferSymbolicRange(SymbolicInferContext& ctx) {
  std::optional<SymDims> start = ctx.ConstSizes(0), limit = ctx.ConstSizes(1), delta = ctx.ConstSizes(2);
  if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 || delta->size() != 1) return;
  const std::optional<int64_t> step = (*delta)[0].ConstantValue();
  if (!step || *step == 0) return;
  const bool up = *step > 0;
  const SymExpr span = up ? SymExpr::Combine(SymOp::kSub, (*limit)[0], (*start)[0])
                          : SymExpr::Combine(SymOp::kSub, (*start)[0], (*limit)[0]);
  const int64_t magnitude = up ? *step : -*step;
  const SymExpr rounded = SymExpr::Combine(SymOp::kAdd, span, SymExpr::Constant(magnitude - 1));
  ctx.SetOutput(0, {SymExpr::Combine(SymOp::kFloorDiv, rounded, SymExpr::Constant(magnitude))});
}

// Advanced indexing, symbolically (the node is verified): as InferIndex, on expressions.
void InferSymbolicIndex(SymbolicInferContext& ctx) {
  const SymDims& x = ctx.Dims(0);
  if (x.empty()) return;
  SymDims b = ctx.DynamicDims(0);
  for (int k = 0; k < ctx.NumDynamic(); ++k) {
    if (ctx.DynamicDims(k).empty() && ctx.Dynamic(k).rank() > 0) return;
    if (k > 0) b = BroadcastDims(b, ctx.DynamicDims(k));
  }
  const auto dims = ctx.Attr<std::vector<int64_t>>("indexed_dims");
  const auto in_x = [&x](int64_t d) { return d >= 0 && d < static_cast<int64_t>(x.size()); };
  if (dims.empty() || !std::all_of(dims.begin(), dims.end(), in_x)) return;
  const bool adjacent = dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size());
  SymDims out = adjacent ? SymDims(x.begin(), x.begin() + dims.front()) : SymDims{};
  out.insert(out.end(), b.begin(), b.end());
  for (int64_t d = adjacent ? dims.back() + 1 : 0; d < static_cast<int64_t>(x.size()); ++d)
    if (adjacent || std::find(dims.begin(), dims.end(), d) == dims.end()) out.push_back(x[static_cast<size_t>(d)]);
  ctx.SetOutput(0, std::move(out));
}

void InferSymbolicHistc(SymbolicInferContext& ctx) { ctx.SetOutput(0, {SymExpr::Constant(ctx.Attr<int64_t>("bins"))}); }

void RegisterAdvancedIndexingOps(OpRegistry& r) {
  using namespace dtypes;
  (void)r.Register(OpDef("Index")
                       .TypeVar("T", kAll)
                       .TypeVar("TIndex", kIndex)
                       .Input("x", "T")
                       .DynamicInput("indices", "TIndex")
                       .Output("y", "T")
                       .Attr("indexed_dims", AttrType::kListInt)
                       .Attr("N", AttrType::kInt)
                       .Infer(InferIndex)
                       .InferSymbolic(InferSymbolicIndex)
                       .Doc("x[..., indices, ...]: torch's advanced indexing, one index tensor per dim in "
                            "indexed_dims (negative indices count from the end; out of range is an error)")
                       .Build());
  (void)r.Register(OpDef("IndexPut")
                       .TypeVar("T", kAll)
                       .TypeVar("TIndex", kIndex)
                       .Input("x", "T")
                       .Input("values", "T")
                       .DynamicInput("indices", "TIndex")
                       .Output("y", "T")
                       .Attr("indexed_dims", AttrType::kListInt)
                       .Attr("N", AttrType::kInt)
                       .Attr("accumulate", AttrType::kBool, false)
                       .Infer(InferIndexPut)
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc("a copy of x with x[indices] = values (or += with accumulate), torch's index_put")
                       .Build());
  (void)r.Register(OpDef("Histc")
                       .TypeVar("T", kFloat)
                       .Input("x", "T")
                       .Output("y", "T")
                       .Attr("bins", AttrType::kInt)
                       .Attr("min", AttrType::kFloat, 0.0)
                       .Attr("max", AttrType::kFloat, 0.0)
                       .Infer(InferHistc)
                       .InferSymbolic(InferSymbolicHistc)
                       .Doc("counts of x in `bins` equal-width bins over [min, max] (min == max: x's own range)")
                       .Build());
}

}  // namespace

void RegisterIndexingOps(OpRegistry& r) {
  using namespace dtypes;
  (void)r.Register(OpDef("BroadcastTo")
                       .TypeVar("T", kAll)
                       .TypeVar("TIndex", kIndex)
                       .Input("x", "T")
                       .Input("shape", "TIndex")
                       .Output("y", "T")
                       .Infer(InferBroadcastTo)
                       .InferSymbolic(InferSymbolicBroadcastTo)
                       .Doc("x broadcast (numpy rules) to the constant `shape`")
                       .Build());
  (void)r.Register(
      OpDef("GatherV2")
          .TypeVar("T", kAll)
          .TypeVar("TIndices", kIndex)
          .TypeVar("TAxis", kIndex)
          .Input("x", "T")
          .Input("indices", "TIndices")
          .Input("axis", "TAxis")
          .Output("y", "T")
          .Attr("batch_dims", AttrType::kInt, int64_t{0})
          .Infer(InferGatherV2)
          .InferSymbolic(InferSymbolicGatherV2)
          .Doc(
              "slices of x along `axis` picked by `indices`: y.shape = x.shape[:axis] + indices.shape + x.shape[axis+1:]")
          .Build());
  (void)r.Register(
      OpDef("StridedSliceV2")
          .TypeVar("T", kAll)
          .TypeVar("TIndex", kIndex)
          .Input("x", "T")
          .Input("begin", "TIndex")
          .Input("end", "TIndex")
          .Input("axes", "TIndex")
          .Input("strides", "TIndex")
          .Output("y", "T")
          .Infer(InferStridedSliceV2)
          .InferSymbolic(InferSymbolicStridedSliceV2)
          .Doc("x[begin:end:stride] on each of `axes` (constants; python slice clamping, positive strides)")
          .Build());
  (void)r.Register(OpDef("Pack")
                       .TypeVar("T", kAll)
                       .DynamicInput("x", "T")
                       .Output("y", "T")
                       .Attr("axis", AttrType::kInt, int64_t{0})
                       .Attr("N", AttrType::kInt)
                       .Infer(InferPack)
                       .InferSymbolic(InferSymbolicPack)
                       .Doc("stacks the N same-shaped inputs along a new dim `axis`")
                       .Build());
  (void)r.Register(OpDef("Range")
                       .TypeVar("T", {DataType::kInt32, DataType::kInt64, DataType::kFloat, DataType::kDouble})
                       .Input("start", "T")
                       .Input("limit", "T")
                       .Input("delta", "T")
                       .Output("y", "T")
                       .Infer(InferRange)
                       .InferSymbolic(InferSymbolicRange)
                       .Doc("start, start + delta, ... below limit (torch.arange); 0-d inputs, constants for a known "
                            "length")
                       .Build());
  RegisterAdvancedIndexingOps(r);
}

}  // namespace ge
