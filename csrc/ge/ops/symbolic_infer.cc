#include "ge/ops/symbolic_infer.h"

#include "ge/ops/infer_util.h"
#include "ge/ops/op_registry.h"

namespace ge {
namespace {

using Op = SymExpr::Op;

SymDims ConstantDims(const Shape& shape) {
  SymDims dims;
  dims.reserve(shape.size());
  for (int64_t d : shape) dims.push_back(SymExpr::Constant(d));
  return dims;
}

bool AllConstant(const SymDims& dims) {
  for (const SymExpr& d : dims)
    if (!d.IsConstant()) return false;
  return true;
}

SymDims DataDims(const Node& data, const SizeExprs& sizes) {
  const Shape& shape = data.output_desc(0).shape;
  SymDims dims = ConstantDims(shape);
  for (size_t d = 0; d < shape.size(); ++d)
    if (const SymExpr* e = sizes.InputDim(data, static_cast<int64_t>(d))) dims[d] = *e;
  return dims;
}

// A node whose inputs all have fixed shapes and that holds no size has fixed output shapes:
// shapes are inferred from input shapes, attributes and constants only.
bool OutputsAreFixed(const Node& node, const SizeExprs& sizes) {
  if (sizes.HasAttrSizes(node)) return false;
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Value v = node.input(i);
    if (!v.valid()) continue;
    const TensorDesc& desc = v.node->output_desc(v.index);
    if (desc.symbolic.size() != desc.shape.size() || !AllConstant(desc.symbolic)) return false;
    if (v.node->type() == kOpConst && sizes.HasConstSizes(*v.node)) return false;
  }
  return true;
}

Status CheckAgainstShape(const Node& node, int output, const std::vector<int64_t>& values,
                         const std::vector<std::string>& names) {
  const TensorDesc& desc = node.output_desc(output);
  if (desc.symbolic.empty() && !desc.shape.empty()) return {};
  GE_CHECK(desc.symbolic.size() == desc.shape.size(), "symbolic shape inference of {} output {} gave {} dims for {}",
           node.ToString(), output, desc.symbolic.size(), desc.ToString());
  for (size_t d = 0; d < desc.shape.size(); ++d) {
    GE_ASSIGN_OR_RETURN(int64_t value, desc.symbolic[d].Evaluate(values));
    GE_CHECK(value == desc.shape[d], "symbolic shape inference of {} output {} gives dim {} = {} = {}, InferShape {}",
             node.ToString(), output, d, desc.symbolic[d].ToString(names), value, desc.ToString());
  }
  return {};
}

// A tensor's elements read as sizes (Tensor::SizeElement); nullopt when one is not a size.
std::optional<std::vector<int64_t>> IntegerValues(const Tensor& tensor) {
  const int64_t n = tensor.desc().NumElements();
  if (n < 0) return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) {
    Expected<int64_t> v = tensor.SizeElement(i);
    if (!v.ok()) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

void InferNode(Node& node, const SizeExprs& sizes, const std::vector<int64_t>& values) {
  for (int o = 0; o < node.num_outputs(); ++o) node.output_desc(o).symbolic.clear();
  if (node.type() == kOpData) {
    node.output_desc(0).symbolic = DataDims(node, sizes);
    return;
  }
  if (OutputsAreFixed(node, sizes)) {
    for (int o = 0; o < node.num_outputs(); ++o) node.output_desc(o).symbolic = ConstantDims(node.output_desc(o).shape);
    return;
  }
  const OpProto* proto = OpRegistry::Global().Find(node.type());
  if (proto == nullptr || !proto->infer_symbolic || sizes.HasAttrSizes(node)) return;
  SymbolicInferContext ctx(node, *proto, sizes, values);
  proto->infer_symbolic(ctx);
}

}  // namespace

std::optional<SymDims> SymbolicInferContext::ConstSizes(int def_index) const {
  const Tensor* tensor = ConstInput(def_index);
  if (tensor == nullptr) return std::nullopt;
  std::optional<std::vector<int64_t>> values = IntegerValues(*tensor);
  if (!values) return std::nullopt;
  const ge::Value v = FlatInput(def_index);
  SymDims out;
  out.reserve(values->size());
  for (size_t i = 0; i < values->size(); ++i) {
    const SymExpr* e = sizes_.ConstElement(*v.node, static_cast<int64_t>(i));
    out.push_back(e ? *e : SymExpr::Constant((*values)[i]));
  }
  return out;
}

std::optional<int64_t> SymbolicInferContext::Value(const SymExpr& expr) const {
  Expected<int64_t> value = expr.Evaluate(values_);
  if (!value.ok()) return std::nullopt;
  return *value;
}

std::optional<size_t> SymbolicInferContext::AxisValue(const SymExpr& axis, size_t rank) const {
  std::optional<int64_t> value = Value(axis);
  if (!value) return std::nullopt;
  return NormalizedAxis(*value, rank);
}

std::optional<size_t> NormalizedAxis(int64_t axis, size_t rank) {
  Expected<int64_t> normalized = NormalizeAxis(axis, static_cast<int64_t>(rank));
  if (!normalized.ok()) return std::nullopt;
  return static_cast<size_t>(*normalized);
}

SymDims BroadcastDims(const SymDims& a, const SymDims& b) {
  const size_t rank = std::max(a.size(), b.size());
  SymDims out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const SymExpr one = SymExpr::Constant(1);
    const SymExpr& da = i < rank - a.size() ? one : a[i - (rank - a.size())];
    const SymExpr& db = i < rank - b.size() ? one : b[i - (rank - b.size())];
    out[i] = da.ConstantValue() == 1 ? db : da;
  }
  return out;
}

SymExpr ProductOfDims(const SymDims& dims, size_t begin, size_t end) {
  SymExpr out = SymExpr::Constant(1);
  for (size_t i = begin; i < end && i < dims.size(); ++i) out = SymExpr::Combine(Op::kMul, out, dims[i]);
  return out;
}

void InferSymbolicSameAsFirstInput(SymbolicInferContext& ctx) { ctx.SetOutput(0, ctx.Dims(0)); }

void InferSymbolicBroadcast(SymbolicInferContext& ctx) {
  if (ctx.Dims(0).empty() && ctx.Input(0).rank() > 0) return;
  if (ctx.Dims(1).empty() && ctx.Input(1).rank() > 0) return;
  ctx.SetOutput(0, BroadcastDims(ctx.Dims(0), ctx.Dims(1)));
}

Status InferSymbolicShapes(Graph& graph, const SizeExprs& sizes, const std::vector<int64_t>& values,
                           const std::vector<std::string>& names) {
  GE_ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
  for (Node* node : order) {
    InferNode(*node, sizes, values);
    for (int o = 0; o < node->num_outputs(); ++o) GE_RETURN_IF_ERROR(CheckAgainstShape(*node, o, values, names));
  }
  return {};
}

}  // namespace ge
