#include "ge/ops/rewrite_utils.h"

#include <algorithm>
#include <cstring>

#include "ge/base/half.h"
#include "ge/ir/annotations.h"
#include "ge/ops/op_registry.h"
#include "ge/ops/op_names.h"

namespace ge {

bool IsMutatedValue(Value v) {
  for (const Use& use : v.node->users(v.index)) {
    const OpProto* proto = OpRegistry::Global().Find(use.user->type());
    if (!proto) continue;
    for (const auto& [out, in] : proto->inplace) {  // `in` is a prototype input: map it to node inputs
      const auto [begin, end] = proto->InputRange(in, use.user->num_inputs());
      if (use.input_index >= begin && use.input_index < end) return true;
    }
  }
  return false;
}

bool FeedsNetOutput(Value v) {
  for (const Use& use : v.node->users(v.index))
    if (use.user->type() == kOpNetOutput) return true;
  return false;
}

bool HasControlEdges(const Node* node) { return !node->control_inputs().empty() || !node->control_outputs().empty(); }

bool IsPlainReshape(const Node* node) {
  return node->type() == kOpReshape && node->GetAttrOr<int64_t>("axis", 0) == 0 &&
         node->GetAttrOr<int64_t>("num_axes", -1) == -1;
}

bool IsSameBytesReshape(const Node* node) {
  return (IsPlainReshape(node) || node->type() == kOpFlatten || node->type() == kOpIdentity) &&
         node->num_outputs() == 1 && !HasControlEdges(node);
}

bool HasSingleUser(Value v) { return v.node->users(v.index).size() == 1; }

bool IsInnerLink(Value v) { return HasSingleUser(v) && !HasControlEdges(v.node) && !FeedsNetOutput(v); }

const Shape& ShapeOf(Value v) { return v.node->output_desc(v.index).shape; }

bool IsPrivateComputedValue(Value v) {
  const std::string& type = v.node->type();
  if (type == kOpData || type == kOpConst || type == kOpTorch || FeedsNetOutput(v)) return false;
  const OpProto* proto = OpRegistry::Global().Find(type);
  return proto == nullptr || proto->InplaceInputOf(v.index) < 0;
}

bool CanBypass(const Node* node, Value replacement) {
  if (node->num_outputs() != 1 || HasControlEdges(node)) return false;
  const Value out{const_cast<Node*>(node), 0};
  const TensorDesc& a = node->output_desc(0);
  const TensorDesc& b = replacement.node->output_desc(replacement.index);
  const bool output_stays_private = !FeedsNetOutput(out) || IsPrivateComputedValue(replacement);
  return a.dtype == b.dtype && a.shape == b.shape && output_stays_private && !IsMutatedValue(out) &&
         !IsMutatedValue(replacement);
}

Status Bypass(Graph& graph, Node* node, Value replacement) {
  graph.ReplaceAllUsesWith(node->output(0), replacement);
  return RemoveWithDeadInputs(graph, node);
}

const Tensor* ConstValue(Value v) {
  if (!v.valid() || v.node->type() != kOpConst) return nullptr;
  auto it = v.node->attrs().find("value");
  return it == v.node->attrs().end() ? nullptr : std::get_if<Tensor>(&it->second);
}

std::optional<std::vector<AxisRange>> SliceRanges(const Node* node, const Shape& dims, int64_t* dropped) {
  const auto rank = static_cast<int64_t>(dims.size());
  auto normalize = [rank](int64_t axis) { return axis < 0 ? axis + rank : axis; };
  std::vector<AxisRange> ranges;
  for (int64_t d : dims) ranges.push_back({0, d, 1});
  *dropped = -1;
  if (node->type() == kOpStridedSliceV2 && node->num_inputs() == 5) {
    const auto begin = ConstInts(node->input(1)), end = ConstInts(node->input(2));
    const auto axes = ConstInts(node->input(3)), steps = ConstInts(node->input(4));
    if (!begin || !end || !axes || !steps || axes->size() != begin->size() || axes->size() != end->size() ||
        axes->size() != steps->size())
      return std::nullopt;
    std::vector<bool> seen(dims.size(), false);
    for (size_t i = 0; i < axes->size(); ++i) {
      const int64_t axis = normalize((*axes)[i]), step = (*steps)[i];
      if (axis < 0 || axis >= rank || step <= 0 || seen[static_cast<size_t>(axis)]) return std::nullopt;
      seen[static_cast<size_t>(axis)] = true;
      const int64_t dim = dims[static_cast<size_t>(axis)];
      auto clamp = [dim](int64_t v) { return std::clamp(v < 0 ? v + dim : v, int64_t{0}, dim); };
      const int64_t b = clamp((*begin)[i]), e = clamp((*end)[i]);
      ranges[static_cast<size_t>(axis)] = {b, e > b ? (e - b + step - 1) / step : 0, step};
    }
    return ranges;
  }
  if (node->type() == kOpGatherV2 && node->num_inputs() == 3) {
    const auto index = ConstInts(node->input(1)), axis_value = ConstInts(node->input(2));
    if (!index || !axis_value || index->size() != 1 || axis_value->size() != 1) return std::nullopt;
    if (!node->input(1).node->output_desc(node->input(1).index).shape.empty()) return std::nullopt;  // 0-d index only
    const int64_t axis = normalize((*axis_value)[0]), at = (*index)[0];
    if (axis < 0 || axis >= rank || at < 0 || at >= dims[static_cast<size_t>(axis)]) return std::nullopt;
    ranges[static_cast<size_t>(axis)] = {at, 1, 1};
    *dropped = axis;
    return ranges;
  }
  return std::nullopt;
}

std::optional<std::vector<int64_t>> ConstInts(Value v) {
  const Tensor* t = ConstValue(v);
  if (!t) return std::nullopt;
  auto ints = t->ToInt64Vector();
  if (!ints.ok()) return std::nullopt;
  return std::move(ints).value();
}

std::optional<double> ConstFloatScalar(Value v) {
  const Tensor* t = ConstValue(v);
  if (t == nullptr || t->desc().NumElements() != 1) return std::nullopt;
  switch (t->desc().dtype) {
    case DataType::kFloat: return *t->data_as<float>();
    case DataType::kDouble: return *t->data_as<double>();
    case DataType::kFloat16: return HalfBitsToFloat(*t->data_as<uint16_t>());
    case DataType::kBFloat16: return BFloat16BitsToFloat(*t->data_as<uint16_t>());
    default: return std::nullopt;
  }
}

bool ConstIsAll(Value v, double x) {
  const Tensor* t = ConstValue(v);
  if (!t) return false;
  // The bytes of x in the constant's dtype, compared element by element.
  unsigned char pattern[8];
  const DataType dt = t->desc().dtype;
  switch (dt) {
    case DataType::kFloat: {
      float f = static_cast<float>(x);
      std::memcpy(pattern, &f, 4);
      break;
    }
    case DataType::kDouble: std::memcpy(pattern, &x, 8); break;
    case DataType::kFloat16: {
      uint16_t h = FloatToHalfBits(static_cast<float>(x));
      std::memcpy(pattern, &h, 2);
      break;
    }
    case DataType::kBFloat16: {
      uint16_t h = FloatToBFloat16Bits(static_cast<float>(x));
      std::memcpy(pattern, &h, 2);
      break;
    }
    case DataType::kInt64: {
      int64_t i = static_cast<int64_t>(x);
      if (i != x) return false;
      std::memcpy(pattern, &i, 8);
      break;
    }
    case DataType::kInt32: {
      int32_t i = static_cast<int32_t>(x);
      if (i != x) return false;
      std::memcpy(pattern, &i, 4);
      break;
    }
    default: return false;
  }
  const int64_t size = DataTypeSize(dt);
  const auto* data = static_cast<const unsigned char*>(t->data());
  for (int64_t i = 0; i < t->desc().NumElements(); ++i)
    if (std::memcmp(data + i * size, pattern, static_cast<size_t>(size)) != 0) return false;
  return true;
}

Node* AddConst(Graph& graph, Tensor value, const std::string& name) {
  Node* node = graph.AddNode(kOpConst, name, {}, 1);
  node->output_desc(0) = value.desc();
  node->SetAttr("value", std::move(value));
  return node;
}

Node* AddIndexConst(Graph& graph, const std::vector<int64_t>& values, const std::string& name, DataType dtype) {
  const auto n = static_cast<int64_t>(values.size());
  Tensor value = dtype == DataType::kInt32
                     ? Tensor::FromVector(DataType::kInt32, {n}, std::vector<int32_t>(values.begin(), values.end()))
                     : Tensor::FromVector(DataType::kInt64, {n}, values);
  return AddConst(graph, std::move(value), name);
}

bool HasSideEffects(const Node* node) {
  if (node->type() == kOpTorch || node->type() == kOpNetOutput || node->type() == kOpData) return true;
  const OpProto* proto = OpRegistry::Global().Find(node->type());
  return proto != nullptr && (!proto->inplace.empty() || proto->communicates);
}

Status RemoveWithDeadInputs(Graph& graph, Node* node) {
  std::vector<std::string> producers;  // by name: a producer may be removed through another input
  for (Value v : node->inputs())
    if (v.valid()) producers.push_back(v.node->name());
  GE_RETURN_IF_ERROR(graph.RemoveNode(node));
  for (const std::string& name : producers) {
    Node* p = graph.FindNode(name);
    if (p == nullptr || HasSideEffects(p) || p->HasUsers() || HasControlEdges(p)) continue;
    GE_RETURN_IF_ERROR(RemoveWithDeadInputs(graph, p));
  }
  return {};
}

}  // namespace ge

namespace ge {

Status SubstituteNode(Graph& graph, Node* old_node, Node* replacement) {
  for (const char* key : {kAttrFxNode, kAttrSource})
    if (old_node->HasAttr(key)) replacement->SetAttr(key, old_node->attrs().at(key));
  GE_RETURN_IF_ERROR(OpRegistry::Global().VerifyAndInfer(*replacement));
  GE_CHECK(replacement->output_desc(0) == old_node->output_desc(0), "{}: replacement {} output {} differs from {}",
           old_node->ToString(), replacement->type(), replacement->output_desc(0).ToString(),
           old_node->output_desc(0).ToString());
  graph.ReplaceAllUsesWith(old_node->output(0), replacement->output(0));
  return {};
}

}  // namespace ge
