// Neural-network ops: convolution, pooling, normalization, softmax. NCHW layout; Conv2D, the
// max/avg pools and BatchNorm also take data_format "NHWC" (channels last: the ChannelsLast pass
// keeps a convolution net's activations so), with window attributes in x's dim order.
#include "ge/ops/epilogue_activation.h"
#include "ge/ops/infer_util.h"
#include "ge/ops/op_names.h"
#include "ge/ops/op_registry.h"

namespace ge {
namespace {

// Windowed ops (conv, pool): the batch dim passes through; the others are fixed when every other
// dim of every input is (they follow from those dims and the attributes only).
void InferSymbolicBatchPasses(SymbolicInferContext& ctx) {
  const SymDims& x = ctx.Dims(0);
  if (x.empty()) return;
  for (int i = 0; i < ctx.NumDeclaredInputs(); ++i) {
    if (!ctx.HasInput(i)) continue;
    const SymDims& dims = ctx.Dims(i);
    if (dims.size() != static_cast<size_t>(ctx.Input(i).rank())) return;
    for (size_t d = i == 0 ? 1 : 0; d < dims.size(); ++d)
      if (!dims[d].IsConstant()) return;
  }
  const Shape& shape = ctx.Output(0).shape;
  SymDims out{x[0]};
  for (size_t d = 1; d < shape.size(); ++d) out.push_back(SymExpr::Constant(shape[d]));
  ctx.SetOutput(0, std::move(out));
}

using IntList = std::vector<int64_t>;

Status CheckList(InferContext& ctx, const char* name, size_t size, IntList* out) {
  *out = ctx.Attr<IntList>(name);
  if (out->size() != size) return ctx.Error("attribute '{}' needs {} values, got {}", name, size, out->size());
  return {};
}

// Where a 4-D activation keeps its channel and spatial dims (batch is dim 0 in both).
struct ActivationLayout {
  size_t c, h, w;
  Format format;
  // A shape of this layout from its four sizes.
  Shape Arrange(int64_t n, int64_t channels, int64_t height, int64_t width) const {
    Shape out(4);
    out[0] = n;
    out[c] = channels;
    out[h] = height;
    out[w] = width;
    return out;
  }
};

Status CheckLayout(InferContext& ctx, ActivationLayout* layout) {
  const std::string format = ctx.Attr<std::string>("data_format");
  if (format == "NCHW") {
    *layout = {1, 2, 3, Format::kNCHW};
  } else if (format == "NHWC") {
    *layout = {3, 1, 2, Format::kNHWC};
  } else {
    return ctx.Error("data_format '{}' is not supported; only NCHW and NHWC", format);
  }
  if (ctx.Input(0).rank() != 4) return ctx.Error("x must be 4-D {}, got {}", format, ShapeToString(ctx.Input(0).shape));
  return {};
}

Status CheckNchw(InferContext& ctx) {
  if (ctx.Attr<std::string>("data_format") != "NCHW")
    return ctx.Error("data_format '{}' is not supported; only NCHW", ctx.Attr<std::string>("data_format"));
  if (ctx.Input(0).rank() != 4) return ctx.Error("x must be 4-D NCHW, got {}", ShapeToString(ctx.Input(0).shape));
  return {};
}

// NCHW x and the convolution window's attributes, four values each.
Status CheckConvAttrs(InferContext& ctx, IntList* strides, IntList* pads, IntList* dilations) {
  GE_RETURN_IF_ERROR(CheckNchw(ctx));
  GE_RETURN_IF_ERROR(CheckList(ctx, "strides", 4, strides));
  GE_RETURN_IF_ERROR(CheckList(ctx, "pads", 4, pads));
  return CheckList(ctx, "dilations", 4, dilations);
}

Status InferConv2D(InferContext& ctx) {
  ActivationLayout l;
  GE_RETURN_IF_ERROR(CheckLayout(ctx, &l));
  IntList strides, pads, dilations;
  GE_RETURN_IF_ERROR(CheckList(ctx, "strides", 4, &strides));
  GE_RETURN_IF_ERROR(CheckList(ctx, "pads", 4, &pads));
  GE_RETURN_IF_ERROR(CheckList(ctx, "dilations", 4, &dilations));
  const Shape& x = ctx.Input(0).shape;
  const Shape& w = ctx.Input(1).shape;
  const int64_t groups = ctx.Attr<int64_t>("groups");
  if (w.size() != 4) return ctx.Error("filter must be 4-D [Cout, Cin/groups, kh, kw], got {}", ShapeToString(w));
  if (groups < 1 || (x[l.c] >= 0 && x[l.c] != w[1] * groups))
    return ctx.Error("x channels {} != filter channels {} x groups {}", x[l.c], w[1], groups);
  if (w[0] % groups != 0) return ctx.Error("output channels {} are not divisible by groups {}", w[0], groups);
  if (ctx.HasInput(2) && ctx.Input(2).shape != Shape{w[0]})
    return ctx.Error("bias must be [{}], got {}", w[0], ShapeToString(ctx.Input(2).shape));
  const int64_t h = WindowOutputSize(x[l.h], w[2], strides[l.h], pads[0], pads[1], dilations[l.h], false);
  const int64_t wd = WindowOutputSize(x[l.w], w[3], strides[l.w], pads[2], pads[3], dilations[l.w], false);
  if ((x[l.h] >= 0 && h <= 0) || (x[l.w] >= 0 && wd <= 0))
    return ctx.Error("input {} is smaller than the kernel", ShapeToString(x));
  ctx.Output(0).SetShape(l.Arrange(x[0], w[0], h, wd));
  ctx.Output(0).format = ctx.Output(0).origin_format = l.format;
  return {};
}

// Conv2D with its epilogue: an optional inference batch norm (inputs 4-7: all or none, each
// [output channels]), an optional residual of the output's shape added, then an optional
// activation of ops/epilogue_activation.h's table (fused_op_type, empty for none).
Status InferFusedConv2D(InferContext& ctx) {
  const std::string activation = ctx.Attr<std::string>("fused_op_type");
  if (!activation.empty() && !EpilogueActivationNamed(activation))
    return ctx.Error("fused_op_type '{}' is neither empty nor one of {}", activation, EpilogueActivationNames());
  GE_RETURN_IF_ERROR(InferConv2D(ctx));
  if (ctx.HasInput(3) && ctx.Input(3).shape != ctx.Output(0).shape)
    return ctx.Error("residual must be the output's shape {}, got {}", ShapeToString(ctx.Output(0).shape),
                     ShapeToString(ctx.Input(3).shape));
  const int batch_norm_inputs = ctx.HasInput(4) + ctx.HasInput(5) + ctx.HasInput(6) + ctx.HasInput(7);
  if (batch_norm_inputs != 0 && batch_norm_inputs != 4)
    return ctx.Error("the batch norm takes all four of scale, offset, mean and variance, got {}", batch_norm_inputs);
  const int64_t channels = ctx.Input(1).shape.at(0);
  for (int i = 4; i < 4 + batch_norm_inputs; ++i)
    if (ctx.Input(i).shape != Shape{channels})
      return ctx.Error("batch norm input {} must be [{}] (the output channels), got {}", i, channels,
                       ShapeToString(ctx.Input(i).shape));
  // The output is its epilogue's (an Add's or an activation's), which carries no layout format.
  ctx.Output(0).format = ctx.Output(0).origin_format = Format::kND;
  return {};
}

Status InferConv2DTranspose(InferContext& ctx) {
  IntList strides, pads, dilations, output_padding;
  GE_RETURN_IF_ERROR(CheckConvAttrs(ctx, &strides, &pads, &dilations));
  GE_RETURN_IF_ERROR(CheckList(ctx, "output_padding", 4, &output_padding));
  const Shape& x = ctx.Input(0).shape;
  const Shape& w = ctx.Input(1).shape;  // [Cin, Cout/groups, kh, kw]
  const int64_t groups = ctx.Attr<int64_t>("groups");
  if (w.size() != 4 || groups < 1 || w[0] != x[1])
    return ctx.Error("filter {} must be [{}, Cout/groups, kh, kw]", ShapeToString(w), x[1]);
  auto size = [&](int i, int p) {
    return (x[i] - 1) * strides[i] - pads[p] - pads[p + 1] + dilations[i] * (w[i] - 1) + output_padding[i] + 1;
  };
  const Shape out = {x[0], w[1] * groups, size(2, 0), size(3, 2)};
  if (out[2] <= 0 || out[3] <= 0) return ctx.Error("output {} would be empty", ShapeToString(out));
  if (ctx.HasInput(2) && ctx.Input(2).shape != Shape{out[1]})
    return ctx.Error("bias must be [{}], got {}", out[1], ShapeToString(ctx.Input(2).shape));
  ctx.Output(0).SetShape(out);
  return {};
}

// The weight gradient of Conv2D: x [N, Cin, H, W] and the output's gradient [N, Cout, Ho, Wo]
// give a gradient shaped like the filter (attr filter_size, [Cout, Cin/groups, kh, kw]).
Status InferConv2DBackpropFilter(InferContext& ctx) {
  IntList filter, strides, pads, dilations;
  GE_RETURN_IF_ERROR(CheckConvAttrs(ctx, &strides, &pads, &dilations));
  GE_RETURN_IF_ERROR(CheckList(ctx, "filter_size", 4, &filter));
  const Shape& x = ctx.Input(0).shape;
  const Shape& dy = ctx.Input(1).shape;
  const int64_t groups = ctx.Attr<int64_t>("groups");
  if (groups < 1 || x[1] != filter[1] * groups || filter[0] % groups != 0)
    return ctx.Error("filter_size {} does not fit x channels {} in {} groups", ShapeToString(filter), x[1], groups);
  const int64_t h = WindowOutputSize(x[2], filter[2], strides[2], pads[0], pads[1], dilations[2], false);
  const int64_t w = WindowOutputSize(x[3], filter[3], strides[3], pads[2], pads[3], dilations[3], false);
  if (dy != Shape{x[0], filter[0], h, w})
    return ctx.Error("out_backprop {} must be the convolution's output [{}, {}, {}, {}]", ShapeToString(dy), x[0],
                     filter[0], h, w);
  ctx.Output(0).SetShape(Shape(filter.begin(), filter.end()));
  return {};
}

Status InferPool(InferContext& ctx) {
  ActivationLayout l;
  GE_RETURN_IF_ERROR(CheckLayout(ctx, &l));
  const Shape& x = ctx.Input(0).shape;
  if (ctx.Attr<bool>("global_pooling")) {
    ctx.Output(0).SetShape(l.Arrange(x[0], x[l.c], 1, 1));
    return {};
  }
  if (ctx.Attr<std::string>("padding_mode") != "CALCULATED")
    return ctx.Error("padding_mode '{}' is not supported; only CALCULATED", ctx.Attr<std::string>("padding_mode"));
  IntList ksize, strides, pads;
  GE_RETURN_IF_ERROR(CheckList(ctx, "ksize", 4, &ksize));
  GE_RETURN_IF_ERROR(CheckList(ctx, "strides", 4, &strides));
  GE_RETURN_IF_ERROR(CheckList(ctx, "pads", 4, &pads));
  for (size_t i : {l.h, l.w})
    if (ksize[i] <= 0 || strides[i] <= 0) return ctx.Error("ksize and strides must be positive");
  const bool ceil_mode = ctx.Attr<bool>("ceil_mode");
  const int64_t h = WindowOutputSize(x[l.h], ksize[l.h], strides[l.h], pads[0], pads[1], 1, ceil_mode);
  const int64_t w = WindowOutputSize(x[l.w], ksize[l.w], strides[l.w], pads[2], pads[3], 1, ceil_mode);
  if ((x[l.h] >= 0 && h <= 0) || (x[l.w] >= 0 && w <= 0))
    return ctx.Error("input {} is smaller than the window", ShapeToString(x));
  ctx.Output(0).SetShape(l.Arrange(x[0], x[l.c], h, w));
  return {};
}

OpDef PoolDef(const char* type) {
  const IntList ones = {1, 1, 1, 1};
  const IntList zeros = {0, 0, 0, 0};
  return std::move(OpDef(type)
                       .TypeVar("T", dtypes::kFloat)
                       .Input("x", "T")
                       .Output("y", "T")
                       .Attr("ksize", AttrType::kListInt)
                       .Attr("strides", AttrType::kListInt, ones)
                       .Attr("padding_mode", AttrType::kString, std::string("CALCULATED"))
                       .Attr("pads", AttrType::kListInt, zeros)
                       .Attr("data_format", AttrType::kString, std::string("NCHW"))
                       .Attr("global_pooling", AttrType::kBool, false)
                       .Attr("ceil_mode", AttrType::kBool, false)
                       .Infer(InferPool)
                       .InferSymbolic(InferSymbolicBatchPasses));
}

// Channels are dim 1, or the last dim of a 4-D NHWC x.
Status InferBatchNorm(InferContext& ctx) {
  const Shape& x = ctx.Input(0).shape;
  if (x.size() < 2) return ctx.Error("x must have rank >= 2, got {}", ShapeToString(x));
  if (ctx.Attr<bool>("is_training")) return ctx.Error("is_training=true is not supported; only inference");
  const bool nhwc = ctx.Attr<std::string>("data_format") == "NHWC";
  if (nhwc && x.size() != 4) return ctx.Error("x must be 4-D NHWC, got {}", ShapeToString(x));
  const int64_t channels = x[nhwc ? 3 : 1];
  for (int i = 1; i <= 4; ++i)
    if (ctx.Input(i).shape != Shape{channels})
      return ctx.Error("input {} must be [{}] (channels), got {}", i, channels, ShapeToString(ctx.Input(i).shape));
  return InferSameAsFirstInput(ctx);
}

Status InferLayerNorm(InferContext& ctx) {
  const Shape& x = ctx.Input(0).shape;
  auto axis = NormalizeAxis(ctx.Attr<int64_t>("begin_norm_axis"), static_cast<int64_t>(x.size()));
  if (!axis.ok()) return ctx.Error("begin_norm_axis: {}", axis.status().message());
  const Shape normalized(x.begin() + *axis, x.end());
  for (int i : {1, 2})
    if (ctx.HasInput(i) && ctx.Input(i).shape != normalized)
      return ctx.Error("{} must be {}, got {}", i == 1 ? "gamma" : "beta", ShapeToString(normalized),
                       ShapeToString(ctx.Input(i).shape));
  Shape stats = x;
  for (size_t i = static_cast<size_t>(*axis); i < stats.size(); ++i) stats[i] = 1;
  ctx.Output(0).SetShape(x);
  ctx.Output(1).SetShape(stats);
  ctx.Output(2).SetShape(stats);
  return {};
}

// Symbolic forms (the node is verified; see ops/symbolic_infer.h).
void InferSymbolicLayerNorm(SymbolicInferContext& ctx) {
  const SymDims& x = ctx.Dims(0);
  if (x.empty()) return;
  const std::optional<size_t> axis = NormalizedAxis(ctx.Attr<int64_t>("begin_norm_axis"), x.size());
  if (!axis) return;
  SymDims stats = x;
  for (size_t i = *axis; i < stats.size(); ++i) stats[i] = SymExpr::Constant(1);
  ctx.SetOutput(0, x);
  ctx.SetOutput(1, stats);
  ctx.SetOutput(2, std::move(stats));
}

void InferSymbolicFusedAttentionGrad(SymbolicInferContext& ctx) {
  for (int i = 0; i < 3; ++i) ctx.SetOutput(i, ctx.Dims(i));
}

void InferSymbolicFusedAttention(SymbolicInferContext& ctx) {
  const SymDims& q = ctx.Dims(0);
  const SymDims& v = ctx.Dims(2);
  if (q.empty() || v.empty()) return;
  SymDims out(q.begin(), q.end() - 1);
  if (ctx.node().num_outputs() > 1) ctx.SetOutput(1, out);  // the log-sum-exp: one per query row
  out.push_back(v.back());
  ctx.SetOutput(0, std::move(out));
}

// The window and layout attributes of Conv2D and FusedConv2D.
OpDef& ConvWindowAttrs(OpDef& def) {
  const IntList ones = {1, 1, 1, 1};
  return def.Attr("strides", AttrType::kListInt)
      .Attr("pads", AttrType::kListInt)
      .Attr("dilations", AttrType::kListInt, ones)
      .Attr("groups", AttrType::kInt, int64_t{1})
      .Attr("data_format", AttrType::kString, std::string("NCHW"));
}

}  // namespace

// Query, key, value and the optional mask (input 3): what FusedAttention and FusedAttentionGrad
// both take.
Status CheckAttentionOperands(InferContext& ctx) {
  const Shape& q = ctx.Input(0).shape;
  const Shape& k = ctx.Input(1).shape;
  const Shape& v = ctx.Input(2).shape;
  if (q.size() < 3 || q.size() > 4 || k.size() != q.size() || v.size() != q.size())
    return ctx.Error("query, key and value must have the same rank, 3 or 4, got {}, {}, {}", ShapeToString(q),
                     ShapeToString(k), ShapeToString(v));
  const size_t r = q.size();
  if (!AttentionLeadingDimsCompatible(q, k, v))
    return ctx.Error(
        "leading dims differ: query {}, key {}, value {} (rank 4: key/value heads must divide the query's)",
        ShapeToString(q), ShapeToString(k), ShapeToString(v));
  if (k[r - 1] != q[r - 1] || v[r - 2] != k[r - 2] || v[r - 1] != q[r - 1])
    return ctx.Error("key and value must be [..., S, {}] like the query's head size; got key {}, value {}", q[r - 1],
                     ShapeToString(k), ShapeToString(v));
  Shape scores(q.begin(), q.end() - 1);
  scores.push_back(k[r - 2]);
  if (ctx.HasInput(3)) {
    auto b = BroadcastShapes(ctx.Input(3).shape, scores);
    if (!b.ok() || *b != scores)
      return ctx.Error("atten_mask {} does not broadcast to the scores {}", ShapeToString(ctx.Input(3).shape),
                       ShapeToString(scores));
  }
  return {};
}

Status InferFusedAttention(InferContext& ctx) {
  GE_RETURN_IF_ERROR(CheckAttentionOperands(ctx));
  const Shape& q = ctx.Input(0).shape;
  Shape out(q.begin(), q.end() - 1);
  if (ctx.node().num_outputs() > 1) ctx.Output(1).SetShape(out);  // the log-sum-exp: one per query row
  out.push_back(ctx.Input(2).shape.back());
  ctx.Output(0).SetShape(out);
  return {};
}

Status InferFusedAttentionGrad(InferContext& ctx) {
  GE_RETURN_IF_ERROR(CheckAttentionOperands(ctx));
  const Shape& q = ctx.Input(0).shape;
  if (q.size() != 4) return ctx.Error("query, key and value must be [B, H, L, E], got query {}", ShapeToString(q));
  if (ctx.Input(4).shape != q || ctx.Input(5).shape != q)
    return ctx.Error("dy {} and y {} must have the query's shape {}", ShapeToString(ctx.Input(4).shape),
                     ShapeToString(ctx.Input(5).shape), ShapeToString(q));
  const Shape rows(q.begin(), q.end() - 1);
  if (ctx.Input(6).shape != rows)
    return ctx.Error("softmax_lse {} must be one per query row, {}", ShapeToString(ctx.Input(6).shape),
                     ShapeToString(rows));
  for (int i = 0; i < 3; ++i) ctx.Output(i).SetShape(ctx.Input(i).shape);
  return {};
}

namespace {

// Softmax along one axis: SoftmaxV2 and SafeSoftmax.
OpDef SoftmaxOp(const char* name) {
  return OpDef(name)
      .TypeVar("T", dtypes::kFloat)
      .Input("x", "T")
      .Output("y", "T")
      .Attr("axes", AttrType::kListInt, IntList{-1})
      .Infer([](InferContext& ctx) -> Status {
        const auto axes = ctx.Attr<IntList>("axes");
        if (axes.size() != 1) return ctx.Error("exactly one softmax axis is supported, got {}", axes.size());
        auto axis = NormalizeAxis(axes[0], ctx.Input(0).rank());
        if (!axis.ok()) return ctx.Error("{}", axis.status().message());
        return InferSameAsFirstInput(ctx);
      })
      .InferSymbolic(InferSymbolicSameAsFirstInput);
}

// FusedAttention's prototype; `with_lse` adds the output `softmax_lse` (FusedAttentionWithLse).
OpDef AttentionOp(const char* name, bool with_lse) {
  OpDef def(name);
  def.TypeVar("T", dtypes::kFloat)
      .Input("query", "T")
      .Input("key", "T")
      .Input("value", "T")
      .OptionalInput("atten_mask", "T")
      .Output("y", "T");
  if (with_lse) def.Output("softmax_lse", "T");
  def.Attr("scale", AttrType::kFloat)
      .Attr("is_causal", AttrType::kBool, false)
      .Infer(InferFusedAttention)
      .InferSymbolic(InferSymbolicFusedAttention);
  return def;
}

}  // namespace

// NOLINTNEXTLINE(readability-function-size): the registration table of the NN ops
void RegisterNnOps(OpRegistry& r) {
  using namespace dtypes;
  const IntList ones = {1, 1, 1, 1};
  (void)r.Register(ConvWindowAttrs(OpDef("Conv2D")
                                       .TypeVar("T", kFloat)
                                       .TypeVar("T8", {DataType::kInt8})
                                       .Input("x", "T")
                                       .Input("filter", "T")
                                       .OptionalInput("bias", "T")
                                       .OptionalInput("offset_w", "T8")
                                       .Output("y", "T"))
                       .Attr("offset_x", AttrType::kInt, int64_t{0})
                       .Infer(InferConv2D)
                       .InferSymbolic(InferSymbolicBatchPasses)
                       .Doc("2-D convolution; x NCHW or NHWC (data_format), filter [Cout, Cin/groups, kh, kw]; "
                            "strides/dilations per dim of x, pads = [top, bottom, left, right]")
                       .Build());
  (void)r.Register(ConvWindowAttrs(OpDef("FusedConv2D")
                                       .TypeVar("T", kFloat)
                                       .Input("x", "T")
                                       .Input("filter", "T")
                                       .OptionalInput("bias", "T")
                                       .OptionalInput("residual", "T")
                                       .OptionalInput("scale", "T")
                                       .OptionalInput("offset", "T")
                                       .OptionalInput("mean", "T")
                                       .OptionalInput("variance", "T")
                                       .Output("y", "T"))
                       .Attr("fused_op_type", AttrType::kString, std::string())
                       .Attr("epsilon", AttrType::kFloat, 1e-5)
                       .Infer(InferFusedConv2D)
                       .InferSymbolic(InferSymbolicBatchPasses)
                       .Doc("y = act(BatchNorm(Conv2D(x, filter, bias)) + residual): Conv2D with its inference batch "
                            "norm (scale, offset, mean, variance [Cout] and epsilon, as BatchNorm's; all four or "
                            "none), residual add (residual shaped as y) and activation (fused_op_type: empty, or one "
                            "of ops/epilogue_activation.h: relu, gelu, gelu_tanh, sigmoid, tanh, silu) applied while "
                            "the output is in cache")
                       .Build());
  (void)r.Register(OpDef("Conv2DTranspose")
                       .TypeVar("T", kFloat)
                       .Input("x", "T")
                       .Input("filter", "T")
                       .OptionalInput("bias", "T")
                       .Output("y", "T")
                       .Attr("strides", AttrType::kListInt)
                       .Attr("pads", AttrType::kListInt)
                       .Attr("dilations", AttrType::kListInt, ones)
                       .Attr("groups", AttrType::kInt, int64_t{1})
                       .Attr("output_padding", AttrType::kListInt, IntList{0, 0, 0, 0})
                       .Attr("data_format", AttrType::kString, std::string("NCHW"))
                       .Infer(InferConv2DTranspose)
                       .InferSymbolic(InferSymbolicBatchPasses)
                       .Doc("transposed 2-D convolution (filter [Cin, Cout/groups, kh, kw]); pads as Conv2D")
                       .Build());
  (void)r.Register(OpDef("Conv2DBackpropFilterD")
                       .TypeVar("T", kFloat)
                       .Input("x", "T")
                       .Input("out_backprop", "T")
                       .Output("y", "T")
                       .Attr("filter_size", AttrType::kListInt)
                       .Attr("strides", AttrType::kListInt)
                       .Attr("pads", AttrType::kListInt)
                       .Attr("dilations", AttrType::kListInt, ones)
                       .Attr("groups", AttrType::kInt, int64_t{1})
                       .Attr("data_format", AttrType::kString, std::string("NCHW"))
                       .Infer(InferConv2DBackpropFilter)
                       .InferSymbolic([](SymbolicInferContext& ctx) {  // the filter's shape, an attribute
                         SymDims out;
                         for (int64_t d : ctx.Attr<IntList>("filter_size")) out.push_back(SymExpr::Constant(d));
                         ctx.SetOutput(0, std::move(out));
                       })
                       .Doc("Conv2D's filter gradient from x and the output's gradient; attrs as Conv2D's, "
                            "filter_size = [Cout, Cin/groups, kh, kw]")
                       .Build());
  (void)r.Register(PoolDef("MaxPoolV3").Doc("2-D max pooling; pads = [top, bottom, left, right]").Build());
  (void)r.Register(PoolDef("MaxPoolWithArgmaxV2")
                       .TypeVar("TIndex", {DataType::kInt64})
                       .Output("argmax", "TIndex")
                       .Infer([](InferContext& ctx) -> Status {
                         GE_RETURN_IF_ERROR(InferPool(ctx));
                         ctx.Output(1).SetShape(ctx.Output(0).shape);
                         ctx.Output(1).dtype = DataType::kInt64;
                         return {};
                       })
                       .Doc("MaxPoolV3 and where each maximum was: its int64 index in the flattened H*W plane "
                            "of x (torch's max_pool2d_with_indices; kept for the backward in training)")
                       .Build());
  (void)r.Register(PoolDef("AvgPoolV2")
                       .Attr("exclusive", AttrType::kBool, true)
                       .Attr("divisor_override", AttrType::kInt, int64_t{0})
                       .Doc("2-D average pooling; exclusive=true leaves padding out of the divisor")
                       .Build());
  (void)r.Register(OpDef("AdaptiveAvgPool2d")
                       .TypeVar("T", kFloat)
                       .Input("x", "T")
                       .Output("y", "T")
                       .Attr("output_size", AttrType::kListInt)
                       .Infer([](InferContext& ctx) -> Status {
                         const Shape& x = ctx.Input(0).shape;
                         const auto size = ctx.Attr<IntList>("output_size");
                         if (x.size() != 4 || size.size() != 2 || size[0] <= 0 || size[1] <= 0)
                           return ctx.Error("needs 4-D x and a positive output_size [h, w]; got x {}",
                                            ShapeToString(x));
                         ctx.Output(0).SetShape({x[0], x[1], size[0], size[1]});
                         return {};
                       })
                       .InferSymbolic([](SymbolicInferContext& ctx) {
                         const SymDims& x = ctx.Dims(0);
                         const auto size = ctx.Attr<IntList>("output_size");
                         if (x.size() == 4)
                           ctx.SetOutput(0, {x[0], x[1], SymExpr::Constant(size[0]), SymExpr::Constant(size[1])});
                       })
                       .Doc("average pooling to a fixed output size (torch's adaptive bins)")
                       .Build());
  (void)r.Register(OpDef("BatchNorm")
                       .TypeVar("T", kFloat)
                       .TypeVar("U", {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16, DataType::kDouble})
                       .Input("x", "T")
                       .Input("scale", "U")
                       .Input("offset", "U")
                       .Input("mean", "U")
                       .Input("variance", "U")
                       .Output("y", "T")
                       .Attr("epsilon", AttrType::kFloat, 1e-4)
                       .Attr("data_format", AttrType::kString, std::string("NCHW"))
                       .Attr("is_training", AttrType::kBool, false)
                       .Infer(InferBatchNorm)
                       .InferSymbolic(InferSymbolicSameAsFirstInput)
                       .Doc("inference batch norm over channel dim 1 (the last with data_format NHWC): (x - mean) / "
                            "sqrt(variance + eps) * scale + offset")
                       .Build());
  (void)r.Register(
      OpDef(kOpRotaryMul)
          .TypeVar("T", dtypes::kFloat)
          .Input("x", "T")
          .Input("r1", "T")
          .Input("r2", "T")
          .Output("y", "T")
          .Infer([](InferContext& ctx) -> Status {
            const Shape& x = ctx.Input(0).shape;
            if (x.empty() || x.back() % 2 != 0)
              return ctx.Error("x {} must have an even last dim (its two halves rotate)", ShapeToString(x));
            for (int i = 1; i < 3; ++i) {
              auto b = BroadcastShapes(ctx.Input(i).shape, x);
              if (!b.ok() || *b != x)
                return ctx.Error("r{} {} does not broadcast to x {}", i, ShapeToString(ctx.Input(i).shape),
                                 ShapeToString(x));
            }
            return InferSameAsFirstInput(ctx);
          })
          .InferSymbolic(InferSymbolicSameAsFirstInput)
          .Doc("rotary position embedding: x * r1 + rotate_half(x) * r2, rotate_half(x) = concat(-x2, x1) of "
               "x's last-dim halves x1, x2 (torch_npu.npu_rotary_mul; what LLaMA-style models write out); r1, r2 "
               "(cos, sin) broadcast to x")
          .Build());
  (void)r.Register(AttentionOp("FusedAttention", false)
                       .Doc("softmax(query @ key^T * scale + atten_mask) @ value over [..., L, E] / [..., S, E] / "
                            "[..., S, E]; the additive mask broadcasts to [..., L, S]; is_causal masks j > i; rank 4: "
                            "key/value may have fewer heads, each serving a group of query heads")
                       .Build());
  (void)r.Register(
      AttentionOp("FusedAttentionWithLse", true)
          .Doc("FusedAttention that also gives the log-sum-exp of each query row's masked, scaled scores "
               "[..., L] (0 for a row that sees no key, as ATen's flash kernel): what training saves for the "
               "backward")
          .Build());
  (void)r.Register(
      OpDef("FusedAttentionGrad")
          .TypeVar("T", dtypes::kFloat)
          .Input("query", "T")
          .Input("key", "T")
          .Input("value", "T")
          .OptionalInput("atten_mask", "T")
          .Input("dy", "T")
          .Input("y", "T")
          .Input("softmax_lse", "T")
          .Output("dq", "T")
          .Output("dk", "T")
          .Output("dv", "T")
          .Attr("scale", AttrType::kFloat)
          .Attr("is_causal", AttrType::kBool, false)
          .Infer(InferFusedAttentionGrad)
          .InferSymbolic(InferSymbolicFusedAttentionGrad)
          .Doc("FusedAttentionWithLse's gradients over [B, H, L, E] from its output y and softmax_lse and the "
               "output's gradient dy: dq, dk, dv like query, key, value (key/value may have fewer heads, each "
               "serving a group of query heads; their gradients sum over the group). The probabilities are "
               "recomputed, never materialized; a row that sees no key (softmax_lse 0, as FusedAttentionWithLse "
               "saves it) has zero gradients")
          .Build());
  (void)r.Register(SoftmaxOp("SoftmaxV2").Doc("softmax along `axes`").Build());
  (void)r.Register(SoftmaxOp("SafeSoftmax")
                       .Doc("softmax along `axes` in which a row that is -inf throughout gives 0, not NaN (ATen's "
                            "_safe_softmax: what SDPA gives a query that sees no key)")
                       .Build());
  (void)r.Register(OpDef("LayerNorm")
                       .TypeVar("T", kFloat)
                       .Input("x", "T")
                       .OptionalInput("gamma", "T")
                       .OptionalInput("beta", "T")
                       .Output("y", "T")
                       .Output("mean", "T")
                       .Output("variance", "T")
                       .Attr("begin_norm_axis", AttrType::kInt, int64_t{0})
                       .Attr("begin_params_axis", AttrType::kInt, int64_t{0})
                       .Attr("epsilon", AttrType::kFloat, 1e-7)
                       .Infer(InferLayerNorm)
                       .InferSymbolic(InferSymbolicLayerNorm)
                       .Doc("normalizes over dims [begin_norm_axis, rank); mean/variance keep those dims as 1")
                       .Build());
}

}  // namespace ge
