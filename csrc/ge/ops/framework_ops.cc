#include "ge/ops/framework_ops.h"

#include "ge/ops/infer_util.h"

namespace ge {
namespace {

AttrValue DefaultOf(AttrType type) {
  switch (type) {
    case AttrType::kInt: return int64_t{0};
    case AttrType::kFloat: return 0.0;
    case AttrType::kBool: return false;
    case AttrType::kString: return std::string();
    case AttrType::kDataType: return DataType::kFloat;
    case AttrType::kListInt: return std::vector<int64_t>{};
    case AttrType::kListFloat: return std::vector<double>{};
    case AttrType::kListBool: return std::vector<bool>{};
    case AttrType::kListString: return std::vector<std::string>{};
    case AttrType::kTensor: break;
  }
  return int64_t{0};
}

// Output descs come from the framework's fake kernel (attrs); an updated argument must keep its
// input's desc, since the operator writes it in place.
Status InferFrameworkOp(InferContext& ctx, std::vector<std::pair<int, int>> mutated) {
  GE_RETURN_IF_ERROR(InferOutputsFromAttrs(ctx));
  const OpProto* proto = OpRegistry::Global().Find(ctx.node().type());
  for (const auto& [out, in] : mutated) {
    if (out >= ctx.node().num_outputs())
      return ctx.Error("mutated argument {} has no output {}", proto->inputs[in].name, out);
    const TensorDesc& input = ctx.Input(proto->InputRange(in, ctx.node().num_inputs()).first);
    if (ctx.Output(out).dtype != input.dtype || ctx.Output(out).shape != input.shape)
      return ctx.Error("the fake kernel says mutated argument '{}' becomes {}{}, but it is {}{}",
                       proto->inputs[in].name, DataTypeName(ctx.Output(out).dtype),
                       ShapeToString(ctx.Output(out).shape), DataTypeName(input.dtype), ShapeToString(input.shape));
  }
  return {};
}

bool SameProto(const OpProto& a, const OpProto& b) {
  if (a.framework_op != b.framework_op || a.inplace != b.inplace || a.mutated_arguments != b.mutated_arguments)
    return false;
  if (a.inputs.size() != b.inputs.size() || a.attrs.size() != b.attrs.size()) return false;
  for (size_t i = 0; i < a.inputs.size(); ++i)
    if (a.inputs[i].name != b.inputs[i].name || a.inputs[i].kind != b.inputs[i].kind) return false;
  for (size_t i = 0; i < a.attrs.size(); ++i)
    if (a.attrs[i].name != b.attrs[i].name || a.attrs[i].type != b.attrs[i].type) return false;
  return true;
}

}  // namespace

Status RegisterFrameworkOp(OpRegistry& registry, const FrameworkOpSpec& spec) {
  GE_CHECK(!spec.framework_op.empty(), "op {}: a framework op needs the operator's name", spec.type);
  OpDef def(spec.type);
  def.TypeVar("T", dtypes::kAll, /*per_value=*/true);
  for (const auto& [name, kind] : spec.inputs) {
    if (kind == InputKind::kRequired)
      def.Input(name, "T");
    else if (kind == InputKind::kOptional)
      def.OptionalInput(name, "T");
    else
      def.DynamicInput(name, "T");
  }
  def.DynamicOutput("y", "T")
      .Attr("output_dtypes", AttrType::kListInt)
      .Attr("output_shapes", AttrType::kListInt)
      .Attr("output_ranks", AttrType::kListInt)
      .Attr("none_args", AttrType::kListString, std::vector<std::string>{});
  for (const auto& [name, type] : spec.attrs) def.Attr(name, type, DefaultOf(type));
  for (const auto& [out, in] : spec.mutated)
    if (spec.in_place) def.Inplace(out, in);
  def.Infer([mutated = spec.mutated](InferContext& ctx) { return InferFrameworkOp(ctx, mutated); });
  def.Doc(spec.doc.empty() ? fmt::format("runs framework operator {} through its dispatcher", spec.framework_op)
                           : spec.doc);
  OpProto proto = def.Build();
  proto.framework_op = spec.framework_op;
  proto.mutated_arguments = spec.mutated;

  if (const OpProto* existing = registry.Find(spec.type)) {
    GE_CHECK(SameProto(*existing, proto), "op type {} is already registered with a different signature", spec.type);
    return {};
  }
  return registry.Register(std::move(proto));
}

}  // namespace ge
