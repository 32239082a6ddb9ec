// Comparisons, logical ops and selection: bool-valued or bool-driven elementwise ops.
#include "ge/ops/infer_util.h"
#include "ge/ops/op_registry.h"

namespace ge {
namespace {

void Compare(OpRegistry& r, const char* type, const char* doc) {
  (void)r.Register(OpDef(type)
                       .TypeVar("T", dtypes::kAll)
                       .TypeVar("TBool", {DataType::kBool})
                       .Input("x1", "T")
                       .Input("x2", "T")
                       .Output("y", "TBool")
                       .Infer([](InferContext& ctx) -> Status {
                         ctx.Output(0).dtype = DataType::kBool;
                         return InferBroadcast(ctx);
                       })
                       .InferSymbolic(InferSymbolicBroadcast)
                       .Doc(doc)
                       .Build());
}

void Logical(OpRegistry& r, const char* type, const char* doc) {
  (void)r.Register(OpDef(type)
                       .TypeVar("TBool", {DataType::kBool})
                       .Input("x1", "TBool")
                       .Input("x2", "TBool")
                       .Output("y", "TBool")
                       .Infer(InferBroadcast)
                       .InferSymbolic(InferSymbolicBroadcast)
                       .Doc(doc)
                       .Build());
}

Status InferMaskedFill(InferContext& ctx) {
  const Shape& x = ctx.Input(0).shape;
  auto both = BroadcastShapes(x, ctx.Input(1).shape);
  if (!both.ok() || *both != x)
    return ctx.Error("mask {} does not broadcast to x {}", ShapeToString(ctx.Input(1).shape), ShapeToString(x));
  if (ctx.Input(2).rank() != 0)
    return ctx.Error("value must be a 0-d tensor, got {}", ShapeToString(ctx.Input(2).shape));
  return InferSameAsFirstInput(ctx);
}

Status InferSelectV2(InferContext& ctx) {
  auto partial = BroadcastShapes(ctx.Input(0).shape, ctx.Input(1).shape);
  if (!partial.ok()) return ctx.Error("{}", partial.status().message());
  auto shape = BroadcastShapes(*partial, ctx.Input(2).shape);
  if (!shape.ok()) return ctx.Error("{}", shape.status().message());
  ctx.Output(0).SetShape(*shape);
  return {};
}

void InferSymbolicSelectV2(SymbolicInferContext& ctx) {
  for (int i = 0; i < 3; ++i)
    if (ctx.Dims(i).empty() && ctx.Input(i).rank() > 0) return;
  ctx.SetOutput(0, BroadcastDims(BroadcastDims(ctx.Dims(0), ctx.Dims(1)), ctx.Dims(2)));
}

}  // namespace

void RegisterLogicalOps(OpRegistry& r) {
  Compare(r, "Equal", "y = x1 == x2 (broadcasting)");
  Compare(r, "NotEqual", "y = x1 != x2 (broadcasting)");
  Compare(r, "Less", "y = x1 < x2 (broadcasting)");
  Compare(r, "LessEqual", "y = x1 <= x2 (broadcasting)");
  Compare(r, "Greater", "y = x1 > x2 (broadcasting)");
  Compare(r, "GreaterEqual", "y = x1 >= x2 (broadcasting)");
  Logical(r, "LogicalAnd", "y = x1 and x2 (bool, broadcasting)");
  Logical(r, "LogicalOr", "y = x1 or x2 (bool, broadcasting)");
  (void)r.Register(OpDef("LogicalNot")
                       .TypeVar("TBool", {DataType::kBool})
                       .Input("x", "TBool")
                       .Output("y", "TBool")
                       .Infer(InferSameAsFirstInput)
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc("y = not x (bool)")
                       .Build());
  (void)r.Register(OpDef("MaskedFill")
                       .TypeVar("T", dtypes::kAll)
                       .TypeVar("TBool", {DataType::kBool})
                       .Input("x", "T")
                       .Input("mask", "TBool")
                       .Input("value", "T")
                       .Output("y", "T")
                       .Infer(InferMaskedFill)
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc("y = x with `value` (0-d) where mask (broadcast to x) is true")
                       .Build());
  (void)r.Register(OpDef("SelectV2")
                       .TypeVar("T", dtypes::kAll)
                       .TypeVar("TBool", {DataType::kBool})
                       .Input("condition", "TBool")
                       .Input("then", "T")
                       .Input("else", "T")
                       .Output("y", "T")
                       .Infer(InferSelectV2)
                       .InferSymbolic(InferSymbolicSelectV2)
                       .Doc("y = condition ? then : else (all three broadcast)")
                       .Build());
}

}  // namespace ge
