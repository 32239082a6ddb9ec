// Element-wise gathers and scatters along a dim, top-k and sort, bitwise ops, boolean and
// statistical reductions, group norm.
#include <algorithm>

#include "ge/ops/infer_util.h"
#include "ge/ops/op_registry.h"

namespace ge {
namespace {

Status CheckDim(InferContext& ctx, const char* attr) {
  auto dim = NormalizeAxis(ctx.Attr<int64_t>(attr), ctx.Input(0).rank());
  if (!dim.ok()) return ctx.Error("{}: {}", attr, dim.status().message());
  return {};
}

Status InferGatherElements(InferContext& ctx) {
  GE_RETURN_IF_ERROR(CheckDim(ctx, "dim"));
  if (ctx.Input(1).rank() != ctx.Input(0).rank())
    return ctx.Error("index rank {} differs from x rank {}", ctx.Input(1).rank(), ctx.Input(0).rank());
  ctx.Output(0).SetShape(ctx.Input(1).shape);
  return {};
}

Status InferScatterElements(InferContext& ctx) {
  GE_RETURN_IF_ERROR(CheckDim(ctx, "axis"));
  const auto reduction = ctx.Attr<std::string>("reduction");
  if (reduction != "none" && reduction != "add")
    return ctx.Error("reduction must be 'none' or 'add', got '{}'", reduction);
  if (ctx.Input(1).shape != ctx.Input(2).shape)
    return ctx.Error("indices {} and updates {} must have one shape", ShapeToString(ctx.Input(1).shape),
                     ShapeToString(ctx.Input(2).shape));
  return InferSameAsFirstInput(ctx);
}

Status InferSortLike(InferContext& ctx, int64_t k, const char* dim_attr) {
  const Shape& x = ctx.Input(0).shape;
  auto dim = NormalizeAxis(ctx.Attr<int64_t>(dim_attr), static_cast<int64_t>(x.size()));
  if (!dim.ok()) return ctx.Error("{}: {}", dim_attr, dim.status().message());
  Shape out = x;
  if (!out.empty()) {
    const int64_t n = out[static_cast<size_t>(*dim)];
    if (k < 0 || (n >= 0 && k > n)) return ctx.Error("k = {} is outside [0, {}]", k, n);
    out[static_cast<size_t>(*dim)] = k;
  }
  ctx.Output(0).SetShape(out);
  ctx.Output(1).SetShape(out);
  ctx.Output(1).dtype = DataType::kInt64;
  return {};
}

Status InferTopK(InferContext& ctx) {
  const Tensor* k = ctx.ConstInput(1);
  if (!k) return ctx.Error("k must be a constant");
  auto values = k->ToInt64Vector();
  if (!values.ok() || values->size() != 1) return ctx.Error("k must hold one integer");
  return InferSortLike(ctx, (*values)[0], "dim");
}

Status InferSort(InferContext& ctx) {
  const Shape& x = ctx.Input(0).shape;
  auto dim = NormalizeAxis(ctx.Attr<int64_t>("axis"), static_cast<int64_t>(x.size()));
  if (!dim.ok()) return ctx.Error("axis: {}", dim.status().message());
  return InferSortLike(ctx, x.empty() ? 0 : x[static_cast<size_t>(*dim)], "axis");
}

Status InferGroupNorm(InferContext& ctx) {
  const Shape& x = ctx.Input(0).shape;
  const int64_t groups = ctx.Attr<int64_t>("num_groups");
  if (x.size() < 2 || groups <= 0 || x[1] % groups != 0)
    return ctx.Error("x {} needs a channel dim divisible by num_groups {}", ShapeToString(x), groups);
  for (int i : {1, 2})
    if (ctx.HasInput(i) && ctx.Input(i).shape != Shape{x[1]})
      return ctx.Error("{} must be [{}], got {}", i == 1 ? "gamma" : "beta", x[1], ShapeToString(ctx.Input(i).shape));
  ctx.Output(0).SetShape(x);
  ctx.Output(1).SetShape({x[0], groups});
  ctx.Output(2).SetShape({x[0], groups});
  return {};
}

// Symbolic forms (the node is verified; see ops/symbolic_infer.h).
void InferSymbolicGatherElements(SymbolicInferContext& ctx) { ctx.SetOutput(0, ctx.Dims(1)); }

// Sort and TopK: both outputs are x's shape with the sorted dim's extent k (all of it for Sort).
void InferSymbolicSortLike(SymbolicInferContext& ctx, const char* dim_attr, std::optional<SymExpr> k) {
  SymDims out = ctx.Dims(0);
  if (out.empty()) return;
  const std::optional<size_t> dim = NormalizedAxis(ctx.Attr<int64_t>(dim_attr), out.size());
  if (!dim) return;
  if (k) out[*dim] = *k;
  ctx.SetOutput(0, out);
  ctx.SetOutput(1, std::move(out));
}

void InferSymbolicTopK(SymbolicInferContext& ctx) {
  std::optional<SymDims> k = ctx.ConstSizes(1);
  if (k && k->size() == 1) InferSymbolicSortLike(ctx, "dim", (*k)[0]);
}

void InferSymbolicSort(SymbolicInferContext& ctx) { InferSymbolicSortLike(ctx, "axis", std::nullopt); }

void InferSymbolicGroupNorm(SymbolicInferContext& ctx) {
  const SymDims& x = ctx.Dims(0);
  if (x.size() < 2) return;
  const SymDims stats = {x[0], SymExpr::Constant(ctx.Attr<int64_t>("num_groups"))};
  ctx.SetOutput(0, x);
  ctx.SetOutput(1, stats);
  ctx.SetOutput(2, stats);
}

}  // namespace

// NOLINTNEXTLINE(readability-function-size): the registration table of these ops
void RegisterSelectionOps(OpRegistry& r) {
  using namespace dtypes;
  (void)r.Register(OpDef("GatherElements")
                       .TypeVar("T", kAll)
                       .TypeVar("TIndex", kIndex)
                       .Input("x", "T")
                       .Input("index", "TIndex")
                       .Output("y", "T")
                       .Attr("dim", AttrType::kInt)
                       .Infer(InferGatherElements)
                       .InferSymbolic(InferSymbolicGatherElements)
                       .Doc("y[i][j] = x[index[i][j]][j] along `dim` (torch.gather)")
                       .Build());
  (void)r.Register(OpDef("ScatterElements")
                       .TypeVar("T", kAll)
                       .TypeVar("TIndex", kIndex)
                       .Input("data", "T")
                       .Input("indices", "TIndex")
                       .Input("updates", "T")
                       .Output("y", "T")
                       .Attr("axis", AttrType::kInt)
                       .Attr("reduction", AttrType::kString, std::string("none"))
                       .Infer(InferScatterElements)
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc("y = data with updates written (or added) at indices along axis")
                       .Build());
  (void)r.Register(OpDef("TopKV2")
                       .TypeVar("T", kNumeric)
                       .TypeVar("TIndex", kIndex)
                       .TypeVar("TOut", {DataType::kInt64})
                       .Input("x", "T")
                       .Input("k", "TIndex")
                       .Output("values", "T")
                       .Output("indices", "TOut")
                       .Attr("dim", AttrType::kInt, int64_t{-1})
                       .Attr("largest", AttrType::kBool, true)
                       .Attr("sorted", AttrType::kBool, true)
                       .Infer(InferTopK)
                       .InferSymbolic(InferSymbolicTopK)
                       .Doc("the k largest (or smallest) values along dim and their int64 indices")
                       .Build());
  (void)r.Register(OpDef("Sort")
                       .TypeVar("T", kNumeric)
                       .TypeVar("TOut", {DataType::kInt64})
                       .Input("x", "T")
                       .Output("y1", "T")
                       .Output("y2", "TOut")
                       .Attr("axis", AttrType::kInt, int64_t{-1})
                       .Attr("descending", AttrType::kBool, false)
                       .Attr("stable", AttrType::kBool, false)
                       .Infer(InferSort)
                       .InferSymbolic(InferSymbolicSort)
                       .Doc("values sorted along axis and their int64 indices")
                       .Build());
  for (const auto& [type, doc] : {std::pair{"BitwiseAnd", "y = x1 & x2"}, std::pair{"BitwiseOr", "y = x1 | x2"},
                                  std::pair{"BitwiseXor", "y = x1 ^ x2"}}) {
    std::vector<DataType> ints = kInt;
    ints.push_back(DataType::kBool);
    RegisterBinary(r, type, ints, doc);
  }
  RegisterReduce(r, "ReduceAny", {DataType::kBool}, "logical or over `axes` (bool; empty axes: all)");
  RegisterReduce(r, "ReduceAll", {DataType::kBool}, "logical and over `axes` (bool; empty axes: all)");
  RegisterReduce(r, "ReduceLogSumExp", kFloat, "log(sum(exp(x))) over `axes` (empty axes: all)");
  const std::vector<AttrDef> correction = {{"correction", AttrType::kFloat, 1.0}};
  RegisterReduce(r, "ReduceVar", kFloat, "variance over `axes` (empty: all) with `correction`", correction);
  RegisterReduce(r, "ReduceStd", kFloat, "standard deviation over `axes` (empty: all) with `correction`", correction);
  (void)r.Register(OpDef("GroupNorm")
                       .TypeVar("T", kFloat)
                       .Input("x", "T")
                       .OptionalInput("gamma", "T")
                       .OptionalInput("beta", "T")
                       .Output("y", "T")
                       .Output("mean", "T")
                       .Output("rstd", "T")
                       .Attr("num_groups", AttrType::kInt)
                       .Attr("eps", AttrType::kFloat, 1e-5)
                       .Infer(InferGroupNorm)
                       .InferSymbolic(InferSymbolicGroupNorm)
                       .Doc("normalizes each of num_groups channel groups; mean and rstd are [N, num_groups]")
                       .Build());
}

}  // namespace ge
