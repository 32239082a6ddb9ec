// Graph boundary ops (Data, Const, NetOutput) and data movement (Reshape, Transpose, ConcatV2, Flatten).
#include <algorithm>

#include "ge/ops/infer_util.h"
#include "ge/ops/op_registry.h"

namespace ge {
namespace {

Status InferReshape(InferContext& ctx) {
  const TensorDesc& x = ctx.Input(0);
  const Tensor* shape_const = ctx.ConstInput(1);
  if (!shape_const) {
    const Shape& s = ctx.Input(1).shape;
    if (s.size() != 1 || s[0] < 0) return ctx.Error("shape must be a 1-D tensor of known length");
    ctx.Output(0).SetShape(Shape(static_cast<size_t>(s[0]), kUnknownDim));
    return {};
  }
  auto dims = shape_const->ToInt64Vector();
  if (!dims.ok()) return ctx.Error("shape: {}", dims.status().message());
  Shape out = *dims;
  const auto inferred = std::count(out.begin(), out.end(), -1);
  if (inferred > 1) return ctx.Error("shape {} has more than one -1", ShapeToString(out));
  const int64_t total = x.NumElements();
  int64_t known = 1;
  for (int64_t d : out) {
    if (d < -1) return ctx.Error("shape {} has a negative dimension", ShapeToString(out));
    if (d >= 0 && __builtin_mul_overflow(known, d, &known))
      return ctx.Error("shape {} has more elements than int64 can count", ShapeToString(out));
  }
  if (total >= 0) {
    if (inferred) {
      if (known == 0 || total % known != 0)
        return ctx.Error("cannot reshape {} to {}", x.ToString(), ShapeToString(out));
      *std::find(out.begin(), out.end(), -1) = total / known;
    } else if (known != total) {
      return ctx.Error("cannot reshape {} ({} elements) to {}", x.ToString(), total, ShapeToString(out));
    }
  }
  ctx.Output(0).SetShape(out);
  return {};
}

Status InferTranspose(InferContext& ctx) {
  const Shape& x = ctx.Input(0).shape;
  const Tensor* perm_const = ctx.ConstInput(1);
  if (!perm_const) return ctx.Error("perm must be a constant");
  auto perm = perm_const->ToInt64Vector();
  if (!perm.ok()) return ctx.Error("perm: {}", perm.status().message());
  if (perm->size() != x.size()) return ctx.Error("perm has {} entries for rank {}", perm->size(), x.size());
  std::vector<bool> seen(x.size(), false);
  Shape out(x.size());
  for (size_t i = 0; i < perm->size(); ++i) {
    auto axis = NormalizeAxis((*perm)[i], static_cast<int64_t>(x.size()));
    if (!axis.ok() || seen[static_cast<size_t>(*axis)])
      return ctx.Error("perm {} is not a permutation", ShapeToString(*perm));
    seen[static_cast<size_t>(*axis)] = true;
    out[i] = x[static_cast<size_t>(*axis)];
  }
  ctx.Output(0).SetShape(out);
  return {};
}

Status InferConcatV2(InferContext& ctx) {
  const int n = ctx.NumDynamic();
  if (n < 1) return ctx.Error("needs at least one input");
  if (ctx.Attr<int64_t>("N") != n) return ctx.Error("attr N = {} but {} inputs are given", ctx.Attr<int64_t>("N"), n);
  const Tensor* dim_const = ctx.ConstInput(1);
  if (!dim_const) return ctx.Error("concat_dim must be a constant");
  auto dim = dim_const->ToInt64Vector();
  if (!dim.ok() || dim->size() != 1) return ctx.Error("concat_dim must hold one integer");
  Shape out = ctx.Dynamic(0).shape;
  auto axis = NormalizeAxis((*dim)[0], static_cast<int64_t>(out.size()));
  if (!axis.ok()) return ctx.Error("concat_dim: {}", axis.status().message());
  for (int k = 1; k < n; ++k) {
    const Shape& s = ctx.Dynamic(k).shape;
    if (s.size() != out.size()) return ctx.Error("input {} has rank {}, input 0 rank {}", k, s.size(), out.size());
    for (size_t i = 0; i < s.size(); ++i) {
      if (static_cast<int64_t>(i) == *axis) {
        out[i] = (out[i] < 0 || s[i] < 0) ? kUnknownDim : out[i] + s[i];
      } else if (s[i] != out[i]) {
        return ctx.Error("input {} shape {} differs from {} outside concat dim {}", k, ShapeToString(s),
                         ShapeToString(ctx.Dynamic(0).shape), *axis);
      }
    }
  }
  ctx.Output(0).SetShape(out);
  return {};
}

Status InferFlatten(InferContext& ctx) {
  const Shape& x = ctx.Input(0).shape;
  auto axis = NormalizeAxis(ctx.Attr<int64_t>("axis"), static_cast<int64_t>(x.size()));
  if (!axis.ok()) return ctx.Error("axis: {}", axis.status().message());
  const int64_t outer = NumElements(Shape(x.begin(), x.begin() + *axis));
  const int64_t inner = NumElements(Shape(x.begin() + *axis, x.end()));
  ctx.Output(0).SetShape({outer, inner});
  return {};
}

// Symbolic forms of the rules above (the node is verified; see ops/symbolic_infer.h).
void InferSymbolicReshape(SymbolicInferContext& ctx) {
  std::optional<SymDims> out = ctx.ConstSizes(1);
  if (!out) return;
  auto inferred = std::find_if(out->begin(), out->end(), [](const SymExpr& d) { return d.ConstantValue() == -1; });
  if (inferred != out->end()) {
    const SymDims& x = ctx.Dims(0);
    if (x.empty() && ctx.Input(0).rank() > 0) return;
    *inferred = SymExpr::Constant(1);
    const SymExpr known = ProductOfDims(*out, 0, out->size());
    *inferred = SymExpr::Combine(SymExpr::Op::kFloorDiv, ProductOfDims(x, 0, x.size()), known);
  }
  ctx.SetOutput(0, std::move(*out));
}

void InferSymbolicTranspose(SymbolicInferContext& ctx) {
  const SymDims& x = ctx.Dims(0);
  std::optional<SymDims> perm = ctx.ConstSizes(1);
  if (x.empty() || !perm) return;
  SymDims out;
  for (const SymExpr& p : *perm) {
    const std::optional<size_t> axis = NormalizedAxis(p.ConstantValue().value_or(INT64_MAX), x.size());
    if (!axis) return;
    out.push_back(x[*axis]);
  }
  ctx.SetOutput(0, std::move(out));
}

void InferSymbolicConcatV2(SymbolicInferContext& ctx) {
  // Every part must have the output's rank (torch's legacy 1-D empty parts, which cat skips,
  // leave the output unknown).
  const size_t rank = static_cast<size_t>(ctx.Output(0).rank());
  SymDims out = ctx.DynamicDims(0);
  std::optional<SymDims> dim = ctx.ConstSizes(1);
  if (rank == 0 || out.size() != rank || !dim || dim->size() != 1 || !(*dim)[0].ConstantValue()) return;
  const std::optional<size_t> axis = NormalizedAxis(*(*dim)[0].ConstantValue(), rank);
  if (!axis) return;
  for (int k = 1; k < ctx.NumDynamic(); ++k) {
    const SymDims& part = ctx.DynamicDims(k);
    if (part.size() != rank) return;
    out[*axis] = SymExpr::Combine(SymExpr::Op::kAdd, out[*axis], part[*axis]);
  }
  ctx.SetOutput(0, std::move(out));
}

void InferSymbolicFlatten(SymbolicInferContext& ctx) {
  const SymDims& x = ctx.Dims(0);
  if (x.empty() && ctx.Input(0).rank() > 0) return;
  const std::optional<size_t> axis = NormalizedAxis(ctx.Attr<int64_t>("axis"), x.size());
  if (!axis) return;
  ctx.SetOutput(0, {ProductOfDims(x, 0, *axis), ProductOfDims(x, *axis, x.size())});
}

}  // namespace

void RegisterArrayOps(OpRegistry& r) {
  using namespace dtypes;
  (void)r.Register(OpDef("Data")
                       .TypeVar("T", kAll)
                       .Output("y", "T")
                       .Attr("index", AttrType::kInt)
                       .Doc("graph input number `index`; its output desc is set by whoever builds the graph")
                       .Build());
  (void)r.Register(OpDef("Const")
                       .TypeVar("T", kAll)
                       .Output("y", "T")
                       .Attr("value", AttrType::kTensor)
                       .Infer([](InferContext& ctx) -> Status {
                         ctx.Output(0) = ctx.Attr<Tensor>("value").desc();
                         return {};
                       })
                       .Doc("a constant tensor")
                       .Build());
  // Each graph output has its own dtype, so NetOutput's type variable binds per value.
  (void)r.Register(OpDef("NetOutput")
                       .TypeVar("T", kAll, /*per_value=*/true)
                       .DynamicInput("x", "T")
                       .Doc("the graph's outputs, in order")
                       .Build());

  (void)r.Register(OpDef("Reshape")
                       .TypeVar("T", kAll)
                       .TypeVar("TShape", kIndex)
                       .Input("x", "T")
                       .Input("shape", "TShape")
                       .Output("y", "T")
                       .Attr("axis", AttrType::kInt, int64_t{0})
                       .Attr("num_axes", AttrType::kInt, int64_t{-1})
                       .Infer(InferReshape)
                       .InferSymbolic(InferSymbolicReshape)
                       .Doc("same elements, new shape; one -1 dim is inferred")
                       .Build());
  (void)r.Register(OpDef("Transpose")
                       .TypeVar("T", kAll)
                       .TypeVar("TPerm", kIndex)
                       .Input("x", "T")
                       .Input("perm", "TPerm")
                       .Output("y", "T")
                       .Infer(InferTranspose)
                       .InferSymbolic(InferSymbolicTranspose)
                       .Doc("y.shape[i] = x.shape[perm[i]]")
                       .Build());
  (void)r.Register(OpDef("ConcatV2")
                       .TypeVar("T", kAll)
                       .TypeVar("TIndex", kIndex)
                       .DynamicInput("x", "T")
                       .Input("concat_dim", "TIndex")
                       .Output("y", "T")
                       .Attr("N", AttrType::kInt)
                       .Infer(InferConcatV2)
                       .InferSymbolic(InferSymbolicConcatV2)
                       .Doc("concatenates the N inputs along concat_dim")
                       .Build());
  (void)r.Register(OpDef("Flatten")
                       .TypeVar("T", kAll)
                       .Input("x", "T")
                       .Output("y", "T")
                       .Attr("axis", AttrType::kInt, int64_t{1})
                       .Infer(InferFlatten)
                       .InferSymbolic(InferSymbolicFlatten)
                       .Doc("2-D result [prod(dims before axis), prod(dims from axis)]")
                       .Build());
}

}  // namespace ge
