#include "ge/compiler/view_ops.h"

#include <algorithm>

#include "ge/passes/rewrite_utils.h"

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

// StridedSliceV2 with constant begin/end/axes/strides, clamped like its shape inference.
std::optional<int64_t> SliceStart(const Node* node, const Shape& dims) {
  const auto begin = ConstInts(node->input(1)), end = ConstInts(node->input(2));
  const auto axes = ConstInts(node->input(3)), strides = ConstInts(node->input(4));
  if (!begin || !end || !axes || !strides || axes->size() != begin->size() || axes->size() != end->size() ||
      axes->size() != strides->size())
    return std::nullopt;
  const auto rank = static_cast<int64_t>(dims.size());
  std::vector<AxisRange> ranges = WholeRanges(dims);
  for (size_t i = 0; i < axes->size(); ++i) {
    const int64_t axis = (*axes)[i] < 0 ? (*axes)[i] + rank : (*axes)[i];
    const int64_t step = (*strides)[i];
    if (axis < 0 || axis >= rank || step <= 0) return std::nullopt;
    AxisRange& r = ranges[static_cast<size_t>(axis)];
    if (r.begin != 0 || r.length != dims[static_cast<size_t>(axis)]) return std::nullopt;  // sliced twice
    const int64_t dim = dims[static_cast<size_t>(axis)];
    auto clamp = [dim](int64_t v) { return std::clamp(v < 0 ? v + dim : v, int64_t{0}, dim); };
    const int64_t b = clamp((*begin)[i]), e = clamp((*end)[i]);
    r = {b, e > b ? (e - b + step - 1) / step : 0, step};
  }
  return ContiguousRunStart(dims, ranges);
}

// GatherV2 of one constant index along a constant axis: torch's select.
std::optional<int64_t> SelectStart(const Node* node, const Shape& dims) {
  const auto index = ConstInts(node->input(1)), axis_value = ConstInts(node->input(2));
  if (!index || !axis_value || index->size() != 1 || axis_value->size() != 1) return std::nullopt;
  const auto rank = static_cast<int64_t>(dims.size());
  const int64_t axis = (*axis_value)[0] < 0 ? (*axis_value)[0] + rank : (*axis_value)[0];
  if (axis < 0 || axis >= rank) return std::nullopt;
  const int64_t at = (*index)[0];
  if (at < 0 || at >= dims[static_cast<size_t>(axis)]) return std::nullopt;  // the kernel reports it
  std::vector<AxisRange> ranges = WholeRanges(dims);
  ranges[static_cast<size_t>(axis)] = {at, 1, 1};
  return ContiguousRunStart(dims, ranges);
}

bool ViewCandidate(const Node* node) {
  if (node->num_outputs() != 1 || node->num_inputs() < 1 || !node->input(0).valid() || HasControlEdges(node)) return false;
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
  const int64_t item = DataTypeSize(node->output_desc(0).dtype);
  const std::vector<int64_t> dense = DenseStrides(dims);
  const auto rank = static_cast<int64_t>(dims.size());
  StridedLayout layout;
  if (node->type() == "GatherV2" && node->num_inputs() == 3) {  // select: drop the axis
    const auto index = ConstInts(node->input(1)), axis_value = ConstInts(node->input(2));
    if (!index || !axis_value || index->size() != 1 || axis_value->size() != 1) return std::nullopt;
    if (node->input(1).node->output_desc(node->input(1).index).shape.size() != 0) return std::nullopt;  // 0-d index only
    const int64_t axis = (*axis_value)[0] < 0 ? (*axis_value)[0] + rank : (*axis_value)[0];
    if (axis < 0 || axis >= rank || (*index)[0] < 0 || (*index)[0] >= dims[static_cast<size_t>(axis)]) return std::nullopt;
    layout.byte_offset = (*index)[0] * dense[static_cast<size_t>(axis)] * item;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis) layout.strides.push_back(dense[static_cast<size_t>(d)]);
    return layout;
  }
  if (node->type() == "StridedSliceV2" && node->num_inputs() == 5) {
    const auto begin = ConstInts(node->input(1)), end = ConstInts(node->input(2));
    const auto axes = ConstInts(node->input(3)), steps = ConstInts(node->input(4));
    if (!begin || !end || !axes || !steps || axes->size() != begin->size() || axes->size() != steps->size() ||
        axes->size() != end->size())
      return std::nullopt;
    layout.strides = dense;
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (size_t i = 0; i < axes->size(); ++i) {
      const int64_t axis = (*axes)[i] < 0 ? (*axes)[i] + rank : (*axes)[i];
      if (axis < 0 || axis >= rank || (*steps)[i] <= 0 || seen[static_cast<size_t>(axis)]) return std::nullopt;
      seen[static_cast<size_t>(axis)] = true;
      const int64_t dim = dims[static_cast<size_t>(axis)];
      const int64_t b = std::clamp((*begin)[i] < 0 ? (*begin)[i] + dim : (*begin)[i], int64_t{0}, dim);
      layout.byte_offset += b * dense[static_cast<size_t>(axis)] * item;
      layout.strides[static_cast<size_t>(axis)] *= (*steps)[i];
    }
    return layout;
  }
  return std::nullopt;
}

std::optional<int64_t> ViewByteOffset(const Node* node) {
  if (!ViewCandidate(node)) return std::nullopt;
  const Value x = node->input(0);
  const TensorDesc& in = x.node->output_desc(x.index);
  const TensorDesc& out = node->output_desc(0);
  std::optional<int64_t> start;
  if (IsSameBytesReshape(node)) {
    if (in.NumElements() == out.NumElements()) start = 0;
  } else if (node->type() == "StridedSliceV2" && node->num_inputs() == 5) {
    start = SliceStart(node, in.shape);
  } else if (node->type() == "GatherV2" && node->num_inputs() == 3) {
    start = SelectStart(node, in.shape);
  }
  if (!start) return std::nullopt;
  return *start * DataTypeSize(out.dtype);
}

}  // namespace ge
