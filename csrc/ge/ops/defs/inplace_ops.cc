// Ops that update an input's memory in place (their output is that memory): how a graph
// writes into the caller's tensors, e.g. a static KV cache, without copying all of it.
#include "ge/ops/infer_util.h"
#include "ge/ops/op_registry.h"

namespace ge {
namespace {

Status InferAssign(InferContext& ctx) {
  auto shape = BroadcastShapes(ctx.Input(0).shape, ctx.Input(1).shape);
  if (!shape.ok() || *shape != ctx.Input(0).shape)
    return ctx.Error("value {} does not broadcast to ref {}", ShapeToString(ctx.Input(1).shape),
                     ShapeToString(ctx.Input(0).shape));
  return InferSameAsFirstInput(ctx);
}

Status InferInplaceIndexCopy(InferContext& ctx) {
  const Shape& var = ctx.Input(0).shape;
  auto dim = NormalizeAxis(ctx.Attr<int64_t>("dim"), static_cast<int64_t>(var.size()));
  if (!dim.ok()) return ctx.Error("dim: {}", dim.status().message());
  const Shape& indices = ctx.Input(1).shape;
  if (indices.size() > 1) return ctx.Error("indices must be 0-d or 1-D, got {}", ShapeToString(indices));
  Shape expected = var;
  if (!expected.empty()) expected[static_cast<size_t>(*dim)] = indices.empty() ? 1 : indices[0];
  const Shape& updates = ctx.Input(2).shape;
  if (updates != expected && !(indices.empty() && NumElements(updates) == NumElements(expected)))
    return ctx.Error("updates must be {}, got {}", ShapeToString(expected), ShapeToString(updates));
  return InferSameAsFirstInput(ctx);
}

}  // namespace

void RegisterInplaceOps(OpRegistry& r) {
  (void)r.Register(OpDef("Assign")
                       .TypeVar("T", dtypes::kAll)
                       .Input("ref", "T")
                       .Input("value", "T")
                       .Output("ref", "T")
                       .Inplace(0, 0)
                       .Infer(InferAssign)
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc("writes value (broadcast) into ref's memory; the output is ref after the write")
                       .Build());
  (void)r.Register(OpDef("InplaceIndexCopy")
                       .TypeVar("T", dtypes::kAll)
                       .TypeVar("TIndex", dtypes::kIndex)
                       .Input("var", "T")
                       .Input("indices", "TIndex")
                       .Input("updates", "T")
                       .Output("var", "T")
                       .Attr("dim", AttrType::kInt)
                       .Inplace(0, 0)
                       .Infer(InferInplaceIndexCopy)
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc("var[..., indices[i], ...] = updates[..., i, ...] along `dim`, in var's memory")
                       .Build());
}

}  // namespace ge
