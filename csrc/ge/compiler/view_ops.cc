#include "ge/compiler/view_ops.h"

#include <algorithm>

#include "ge/ops/rewrite_utils.h"
#include "ge/ops/op_names.h"

namespace ge {
namespace {

// One axis of a selection: `length` elements from `begin`, `step` apart.
struct AxisRange {
  int64_t begin = 0;
  int64_t length = 0;
  int64_t step = 1;
};

// Element offset of a selection when it is one contiguous run of a row-major tensor of shape
// `dims`: every axis after some axis k is whole, axis k is unit-stride (or one element), and
// every axis before k holds one element.
std::optional<int64_t> ContiguousRunStart(const Shape& dims, const std::vector<AxisRange>& ranges) {
  const int rank = static_cast<int>(dims.size());
  int k = rank - 1;
  auto whole = [&](int a) { return ranges[a].begin == 0 && ranges[a].length == dims[a]; };
  while (k >= 0 && whole(k)) --k;
  if (k >= 0 && ranges[k].step != 1 && ranges[k].length != 1) return std::nullopt;
  for (int a = 0; a < k; ++a)
    if (ranges[a].length != 1) return std::nullopt;
  int64_t offset = 0, stride = 1;
  for (int a = rank - 1; a >= 0; --a) {
    offset += ranges[a].begin * stride;
    stride *= dims[a];
  }
  return offset;
}

std::vector<AxisRange> WholeRanges(const Shape& dims) {
  std::vector<AxisRange> ranges;
  for (int64_t d : dims) ranges.push_back({0, d, 1});
  return ranges;
}

// What a node takes of input 0 (of shape `dims`), per axis: a StridedSliceV2 with constant
// begin/end/axes/strides (clamped like its shape inference; each axis sliced once), or a
// GatherV2 of one constant 0-d index along a constant axis (torch's select; `*dropped` is that
// axis, which the output does not have). nullopt for anything else.
std::optional<std::vector<AxisRange>> Selection(const Node* node, const Shape& dims, int64_t* dropped) {
  const auto rank = static_cast<int64_t>(dims.size());
  auto normalize = [rank](int64_t axis) { return axis < 0 ? axis + rank : axis; };
  std::vector<AxisRange> ranges = WholeRanges(dims);
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
    if (axis < 0 || axis >= rank || at < 0 || at >= dims[static_cast<size_t>(axis)])
      return std::nullopt;  // the kernel reports it
    ranges[static_cast<size_t>(axis)] = {at, 1, 1};
    *dropped = axis;
    return ranges;
  }
  return std::nullopt;
}

bool ViewCandidate(const Node* node) {
  if (node->num_outputs() != 1 || node->num_inputs() < 1 || !node->input(0).valid() || HasControlEdges(node))
    return false;
  const Value x = node->input(0);
  const TensorDesc& in = x.node->output_desc(x.index);
  const TensorDesc& out = node->output_desc(0);
  return in.dtype == out.dtype && out.NumElements() > 0 && !IsMutatedValue(x) &&
         !IsMutatedValue(Value{const_cast<Node*>(node), 0});
}

std::vector<int64_t> DenseStrides(const Shape& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

}  // namespace

std::optional<StridedLayout> StridedViewOf(const Node* node) {
  if (!ViewCandidate(node)) return std::nullopt;
  const Value x = node->input(0);
  const Shape& dims = x.node->output_desc(x.index).shape;
  int64_t dropped = -1;
  const auto ranges = Selection(node, dims, &dropped);
  if (!ranges) return std::nullopt;
  const int64_t item = DataTypeSize(node->output_desc(0).dtype);
  const std::vector<int64_t> dense = DenseStrides(dims);
  StridedLayout layout;
  for (size_t d = 0; d < dims.size(); ++d) {
    layout.byte_offset += (*ranges)[d].begin * dense[d] * item;
    if (static_cast<int64_t>(d) != dropped) layout.strides.push_back(dense[d] * (*ranges)[d].step);
  }
  return layout;
}

std::optional<int64_t> ViewByteOffset(const Node* node) {
  if (!ViewCandidate(node)) return std::nullopt;
  const Value x = node->input(0);
  const TensorDesc& in = x.node->output_desc(x.index);
  const TensorDesc& out = node->output_desc(0);
  std::optional<int64_t> start;
  int64_t dropped = -1;
  if (IsSameBytesReshape(node)) {
    if (in.NumElements() == out.NumElements()) start = 0;
  } else if (auto ranges = Selection(node, in.shape, &dropped)) {
    start = ContiguousRunStart(in.shape, *ranges);
  }
  if (!start) return std::nullopt;
  return *start * DataTypeSize(out.dtype);
}

}  // namespace ge
