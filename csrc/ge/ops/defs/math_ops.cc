// Matrix products and reductions.
#include <algorithm>
#include <set>

#include "ge/ops/epilogue_activation.h"
#include "ge/ops/infer_util.h"
#include "ge/ops/op_registry.h"

namespace ge {
namespace {

// dims of x1 [.., M, K] and x2 [.., K, N] after the transpose flags; checks K.
Status MatMulDims(InferContext& ctx, bool t1, bool t2, int64_t* m, int64_t* n) {
  const Shape& a = ctx.Input(0).shape;
  const Shape& b = ctx.Input(1).shape;
  const int64_t ka = t1 ? a[a.size() - 2] : a.back();
  const int64_t kb = t2 ? b.back() : b[b.size() - 2];
  if (ka >= 0 && kb >= 0 && ka != kb)
    return ctx.Error("inner dimensions differ: x1 {} x2 {} (transpose {} {})", ShapeToString(a), ShapeToString(b), t1,
                     t2);
  *m = t1 ? a.back() : a[a.size() - 2];
  *n = t2 ? b[b.size() - 2] : b.back();
  if (ctx.HasInput(2)) {
    const Shape& bias = ctx.Input(2).shape;
    if (bias.size() != 1 || (bias[0] >= 0 && *n >= 0 && bias[0] != *n))
      return ctx.Error("bias must be [{}], got {}", *n, ShapeToString(bias));
  }
  return {};
}

Status InferMatMulV2(InferContext& ctx) {
  if (ctx.Input(0).rank() != 2 || ctx.Input(1).rank() != 2)
    return ctx.Error("x1 and x2 must be 2-D, got {} and {}", ShapeToString(ctx.Input(0).shape),
                     ShapeToString(ctx.Input(1).shape));
  int64_t m, n;
  GE_RETURN_IF_ERROR(MatMulDims(ctx, ctx.Attr<bool>("transpose_x1"), ctx.Attr<bool>("transpose_x2"), &m, &n));
  ctx.Output(0).SetShape({m, n});
  return {};
}

Status InferBatchMatMulV2(InferContext& ctx) {
  const Shape& a = ctx.Input(0).shape;
  const Shape& b = ctx.Input(1).shape;
  if (a.size() < 2 || b.size() < 2)
    return ctx.Error("x1 and x2 must have rank >= 2, got {} and {}", ShapeToString(a), ShapeToString(b));
  int64_t m, n;
  GE_RETURN_IF_ERROR(MatMulDims(ctx, ctx.Attr<bool>("adj_x1"), ctx.Attr<bool>("adj_x2"), &m, &n));
  auto batch = BroadcastShapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  if (!batch.ok()) return ctx.Error("batch dims: {}", batch.status().message());
  Shape out = *batch;
  out.push_back(m);
  out.push_back(n);
  ctx.Output(0).SetShape(out);
  return {};
}

Status InferReduce(InferContext& ctx) {
  const Shape& in = ctx.Input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  const Tensor* axes_const = ctx.ConstInput(1);
  if (!axes_const) return ctx.Error("axes must be a constant");
  auto axes = axes_const->ToInt64Vector();
  if (!axes.ok()) return ctx.Error("axes: {}", axes.status().message());
  std::set<int64_t> reduced;
  for (int64_t a : *axes) {
    auto axis = NormalizeAxis(a, rank);
    if (!axis.ok()) return ctx.Error("{}", axis.status().message());
    reduced.insert(*axis);
  }
  if (axes->empty())  // empty axes reduce every dimension, as torch.sum(x, dim=[]) does
    for (int64_t i = 0; i < rank; ++i) reduced.insert(i);
  const bool keep = ctx.Attr<bool>("keep_dims");
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced.count(i))
      out.push_back(in[i]);
    else if (keep)
      out.push_back(1);
  }
  ctx.Output(0).SetShape(out);
  return {};
}

// Symbolic forms (the node is verified; see ops/symbolic_infer.h).
// Both products: leading dims broadcast (none at rank 2), then m from x1, n from x2.
InferSymbolicFn InferSymbolicMatMul(const char* flag1, const char* flag2) {
  return [flag1, flag2](SymbolicInferContext& ctx) {
    const SymDims& a = ctx.Dims(0);
    const SymDims& b = ctx.Dims(1);
    if (a.size() < 2 || b.size() < 2) return;
    SymDims out = BroadcastDims(SymDims(a.begin(), a.end() - 2), SymDims(b.begin(), b.end() - 2));
    out.push_back(ctx.Attr<bool>(flag1) ? a.back() : a[a.size() - 2]);
    out.push_back(ctx.Attr<bool>(flag2) ? b[b.size() - 2] : b.back());
    ctx.SetOutput(0, std::move(out));
  };
}

void InferSymbolicReduce(SymbolicInferContext& ctx) {
  const SymDims& in = ctx.Dims(0);
  std::optional<SymDims> axes = ctx.ConstSizes(1);
  if (in.empty() || !axes) return;
  std::set<size_t> reduced;
  for (const SymExpr& a : *axes) {
    const std::optional<size_t> axis = ctx.AxisValue(a, in.size());
    if (!axis) return;
    reduced.insert(*axis);
  }
  const bool keep = ctx.Attr<bool>("keep_dims");
  SymDims out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!axes->empty() && !reduced.count(i))
      out.push_back(in[i]);
    else if (keep)
      out.push_back(SymExpr::Constant(1));
  }
  ctx.SetOutput(0, std::move(out));
}

}  // namespace

void RegisterReduce(OpRegistry& r, const char* type, const std::vector<DataType>& allowed, const char* doc,
                    const std::vector<AttrDef>& extra_attrs) {
  OpDef def(type);
  for (const auto& attr : extra_attrs) def.Attr(attr.name, attr.type, attr.default_value);
  (void)r.Register(def.TypeVar("T", allowed)
                       .TypeVar("TIndex", dtypes::kIndex)
                       .Input("x", "T")
                       .Input("axes", "TIndex")
                       .Output("y", "T")
                       .Attr("keep_dims", AttrType::kBool, false)
                       .Infer(InferReduce)
                       .InferSymbolic(InferSymbolicReduce)
                       .Doc(doc)
                       .Build());
}

namespace {

// MatMulV2 and BatchMatMulV2 share inputs and differ in their transpose flags' names.
void MatMul(OpRegistry& r, const char* type, const char* flag1, const char* flag2, InferShapeFn infer,
            const char* doc) {
  (void)r.Register(OpDef(type)
                       .TypeVar("T", dtypes::kNumeric)
                       .TypeVar("T8", {DataType::kInt8})
                       .Input("x1", "T")
                       .Input("x2", "T")
                       .OptionalInput("bias", "T")
                       .OptionalInput("offset_w", "T8")
                       .Output("y", "T")
                       .Attr(flag1, AttrType::kBool, false)
                       .Attr(flag2, AttrType::kBool, false)
                       .Attr("offset_x", AttrType::kInt, int64_t{0})
                       .Infer(std::move(infer))
                       .InferSymbolic(InferSymbolicMatMul(flag1, flag2))
                       .Doc(doc)
                       .Build());
}

// The activations a FusedMatMul applies to its product (GE's FusedMatMul fused_op_type).
Status InferFusedMatMul(InferContext& ctx) {
  const std::string activation = ctx.Attr<std::string>("fused_op_type");
  if (!EpilogueActivationNamed(activation))
    return ctx.Error("fused_op_type '{}' is not one of {}", activation, EpilogueActivationNames());
  return InferMatMulV2(ctx);
}

// x [M, K] rows grouped by the end offsets [G] (MoE tokens sorted by expert), weight [G, K, N].
Status InferGroupedMatMul(InferContext& ctx) {
  const Shape &x = ctx.Input(0).shape, &w = ctx.Input(1).shape, &offsets = ctx.Input(2).shape;
  if (x.size() != 2 || w.size() != 3 || offsets.size() != 1)
    return ctx.Error("takes x [M, K], weight [G, K, N] and offsets [G]; got {}, {} and {}", ShapeToString(x),
                     ShapeToString(w), ShapeToString(offsets));
  if (x[1] != w[1] || offsets[0] != w[0])
    return ctx.Error("x {} and weight {} disagree on K, or offsets {} on the number of groups", ShapeToString(x),
                     ShapeToString(w), ShapeToString(offsets));
  ctx.Output(0).SetShape({x[0], w[2]});
  return {};
}

}  // namespace

void RegisterMathOps(OpRegistry& r) {
  MatMul(r, "MatMulV2", "transpose_x1", "transpose_x2", InferMatMulV2,
         "y = op(x1) @ op(x2) + bias for 2-D x1, x2; op transposes when the flag is set");
  MatMul(r, "BatchMatMulV2", "adj_x1", "adj_x2", InferBatchMatMulV2,
         "batched matrix product over the last two dims; leading dims broadcast");
  (void)r.Register(OpDef("FusedMatMul")
                       .TypeVar("T", dtypes::kFloat)
                       .Input("x1", "T")
                       .Input("x2", "T")
                       .OptionalInput("bias", "T")
                       .Output("y", "T")
                       .Attr("transpose_x1", AttrType::kBool, false)
                       .Attr("transpose_x2", AttrType::kBool, false)
                       .Attr("fused_op_type", AttrType::kString)
                       .Infer(InferFusedMatMul)
                       .InferSymbolic(InferSymbolicMatMul("transpose_x1", "transpose_x2"))
                       .Doc("y = act(op(x1) @ op(x2) + bias), act = fused_op_type (ops/epilogue_activation.h: relu, "
                            "gelu, gelu_tanh, sigmoid, tanh, silu): MatMulV2 with its activation applied while the "
                            "product is still in cache")
                       .Build());
  (void)r.Register(OpDef("GroupedMatMul")
                       .TypeVar("T", dtypes::kFloat)
                       .TypeVar("TIndex", dtypes::kIndex)
                       .Input("x", "T")
                       .Input("weight", "T")
                       .Input("offsets", "TIndex")
                       .Output("y", "T")
                       .Infer(InferGroupedMatMul)
                       .InferSymbolic([](SymbolicInferContext& ctx) {  // [M, N] of x [M, K] and weight [G, K, N]
                         const SymDims &x = ctx.Dims(0), &w = ctx.Dims(1);
                         if (x.size() == 2 && w.size() == 3) ctx.SetOutput(0, {x[0], w[2]});
                       })
                       .Doc("rows [offsets[g-1], offsets[g]) of x times weight[g] (a mixture of experts' tokens "
                            "sorted by expert); rows after the last offset are zero")
                       .Build());
  RegisterReduce(r, "ReduceSum", dtypes::kNumeric, "sum over `axes` (empty axes: all)");
  RegisterReduce(r, "ReduceMean", dtypes::kNumeric, "mean over `axes` (empty axes: all)");
}

}  // namespace ge
