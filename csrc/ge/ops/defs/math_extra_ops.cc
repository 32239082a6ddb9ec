// More elementwise math, activations with parameters, clipping, and the reductions and scans
// beyond sum/mean: table-driven registrations.
#include "ge/ops/infer_util.h"
#include "ge/ops/op_registry.h"

namespace ge {
namespace {

struct UnarySpec {
  const char* type;
  bool float_only;
  const char* doc;
};

constexpr UnarySpec kUnary[] = {
    {"Abs", false, "y = |x|"},
    {"Sign", false, "y = -1, 0 or 1 by the sign of x"},
    {"Floor", false, "y = floor(x)"},
    {"Ceil", false, "y = ceil(x)"},
    {"Round", false, "y = x rounded half to even"},
    {"Trunc", false, "y = x rounded toward zero"},
    {"Reciprocal", true, "y = 1 / x"},
    {"Expm1", true, "y = exp(x) - 1"},
    {"Log1p", true, "y = ln(1 + x)"},
    {"Log2", true, "y = log2(x)"},
    {"Sin", true, "y = sin(x)"},
    {"Cos", true, "y = cos(x)"},
    {"Tan", true, "y = tan(x)"},
    {"Atan", true, "y = atan(x)"},
    {"Erf", true, "y = erf(x)"},
    {"HardSigmoid", true, "y = relu6(x + 3) / 6"},
    {"HardSwish", true, "y = x * relu6(x + 3) / 6"},
    {"Mish", true, "y = x * tanh(softplus(x))"},
};

Status InferArgReduce(InferContext& ctx) {
  const Shape& x = ctx.Input(0).shape;
  const Tensor* dim_const = ctx.ConstInput(1);
  if (!dim_const) return ctx.Error("dimension must be a constant");
  auto dims = dim_const->ToInt64Vector();
  if (!dims.ok() || dims->size() != 1) return ctx.Error("dimension must hold one integer");
  auto axis = NormalizeAxis((*dims)[0], static_cast<int64_t>(x.size()));
  if (!axis.ok()) return ctx.Error("dimension: {}", axis.status().message());
  Shape out = x;
  if (!out.empty()) {
    if (ctx.Attr<bool>("keep_dims"))
      out[static_cast<size_t>(*axis)] = 1;
    else
      out.erase(out.begin() + *axis);
  }
  ctx.Output(0).dtype = DataType::kInt64;
  ctx.Output(0).SetShape(out);
  return {};
}

Status InferAxisAttr(InferContext& ctx, const char* attr) {
  auto axis = NormalizeAxis(ctx.Attr<int64_t>(attr), ctx.Input(0).rank());
  if (!axis.ok()) return ctx.Error("{}: {}", attr, axis.status().message());
  return InferSameAsFirstInput(ctx);
}

// Symbolic form (the node is verified; see ops/symbolic_infer.h).
void InferSymbolicArgReduce(SymbolicInferContext& ctx) {
  SymDims out = ctx.Dims(0);
  std::optional<SymDims> dim = ctx.ConstSizes(1);
  if ((out.empty() && ctx.Input(0).rank() > 0) || !dim || dim->size() != 1) return;
  if (!out.empty()) {
    const std::optional<size_t> axis = ctx.AxisValue((*dim)[0], out.size());
    if (!axis) return;
    if (ctx.Attr<bool>("keep_dims"))
      out[*axis] = SymExpr::Constant(1);
    else
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(*axis));
  }
  ctx.SetOutput(0, std::move(out));
}

}  // namespace

// NOLINTNEXTLINE(readability-function-size): the registration table of these ops
void RegisterMathExtraOps(OpRegistry& r) {
  using namespace dtypes;
  for (const auto& u : kUnary) RegisterUnary(r, u.type, u.float_only ? kFloat : kNumeric, u.doc);
  (void)r.Register(OpDef("LeakyRelu")
                       .TypeVar("T", kFloat)
                       .Input("x", "T")
                       .Output("y", "T")
                       .Attr("negative_slope", AttrType::kFloat, 0.0)
                       .Infer(InferSameAsFirstInput)
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc("y = x > 0 ? x : negative_slope * x")
                       .Build());
  (void)r.Register(OpDef("Swish")
                       .TypeVar("T", kFloat)
                       .Input("x", "T")
                       .Output("y", "T")
                       .Attr("scale", AttrType::kFloat, 1.0)
                       .Infer(InferSameAsFirstInput)
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc("y = x * sigmoid(scale * x); scale 1 is SiLU")
                       .Build());
  (void)r.Register(OpDef("Elu")
                       .TypeVar("T", kFloat)
                       .Input("x", "T")
                       .Output("y", "T")
                       .Attr("alpha", AttrType::kFloat, 1.0)
                       .Attr("scale", AttrType::kFloat, 1.0)
                       .Attr("input_scale", AttrType::kFloat, 1.0)
                       .Infer(InferSameAsFirstInput)
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc("y = scale * (x > 0 ? x : alpha * (exp(input_scale * x) - 1))")
                       .Build());
  (void)r.Register(OpDef("Softplus")
                       .TypeVar("T", kFloat)
                       .Input("x", "T")
                       .Output("y", "T")
                       .Attr("beta", AttrType::kFloat, 1.0)
                       .Attr("threshold", AttrType::kFloat, 20.0)
                       .Infer(InferSameAsFirstInput)
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc("y = ln(1 + exp(beta * x)) / beta; linear above threshold")
                       .Build());
  (void)r.Register(OpDef("ClipByValue")
                       .TypeVar("T", kNumeric)
                       .Input("x", "T")
                       .Input("clip_value_min", "T")
                       .Input("clip_value_max", "T")
                       .Output("y", "T")
                       .Infer([](InferContext& ctx) -> Status {
                         for (int i : {1, 2}) {
                           auto shape = BroadcastShapes(ctx.Input(0).shape, ctx.Input(i).shape);
                           if (!shape.ok() || *shape != ctx.Input(0).shape)
                             return ctx.Error("bound {} does not broadcast to x {}", ShapeToString(ctx.Input(i).shape),
                                              ShapeToString(ctx.Input(0).shape));
                         }
                         return InferSameAsFirstInput(ctx);
                       })
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc("y = min(max(x, clip_value_min), clip_value_max), bounds broadcast to x")
                       .Build());
  for (const auto& [type, doc] : {std::pair{"FloorDiv", "y = floor(x1 / x2) (broadcasting)"},
                                  std::pair{"FloorMod", "y = x1 - floor(x1 / x2) * x2, the sign of x2 (broadcasting)"}})
    RegisterBinary(r, type, kNumeric, doc);
  RegisterReduce(r, "ReduceMax", kNumeric, "max over `axes` (empty axes: all)");
  RegisterReduce(r, "ReduceMin", kNumeric, "min over `axes` (empty axes: all)");
  RegisterReduce(r, "ReduceProd", kNumeric, "product over one axis or all (empty axes)");
  for (const char* type : {"ArgMaxV2", "ArgMin"})
    (void)r.Register(OpDef(type)
                         .TypeVar("T", kNumeric)
                         .TypeVar("TIndex", kIndex)
                         .TypeVar("TOut", {DataType::kInt64})
                         .Input("x", "T")
                         .Input("dimension", "TIndex")
                         .Output("y", "TOut")
                         .Attr("keep_dims", AttrType::kBool, false)
                         .Infer(InferArgReduce)
                         .InferSymbolic(InferSymbolicArgReduce)
                         .Doc("index of the extreme value along `dimension` (first one on ties)")
                         .Build());
  (void)r.Register(OpDef("LogSoftmaxV2")
                       .TypeVar("T", kFloat)
                       .Input("logits", "T")
                       .Output("logsoftmax", "T")
                       .Attr("axes", AttrType::kListInt, std::vector<int64_t>{-1})
                       .Infer([](InferContext& ctx) -> Status {
                         const auto axes = ctx.Attr<std::vector<int64_t>>("axes");
                         if (axes.size() != 1) return ctx.Error("exactly one axis is supported");
                         auto axis = NormalizeAxis(axes[0], ctx.Input(0).rank());
                         if (!axis.ok()) return ctx.Error("{}", axis.status().message());
                         return InferSameAsFirstInput(ctx);
                       })
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc("log(softmax(logits)) along `axes`")
                       .Build());
  (void)r.Register(OpDef("Cumsum")
                       .TypeVar("T", kNumeric)
                       .Input("x", "T")
                       .Output("y", "T")
                       .Attr("axis", AttrType::kInt)
                       .Attr("exclusive", AttrType::kBool, false)
                       .Attr("reverse", AttrType::kBool, false)
                       .Infer([](InferContext& ctx) -> Status {
                         if (ctx.Attr<bool>("exclusive") || ctx.Attr<bool>("reverse"))
                           return ctx.Error("exclusive and reverse scans are not supported");
                         return InferAxisAttr(ctx, "axis");
                       })
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc("running sum along `axis`")
                       .Build());
}

}  // namespace ge
