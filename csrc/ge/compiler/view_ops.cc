#include "ge/compiler/view_ops.h"

#include <algorithm>

#include "ge/ops/rewrite_utils.h"
#include "ge/ops/op_names.h"

namespace ge {
namespace {

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
  const auto ranges = SliceRanges(node, dims, &dropped);
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
  } else if (auto ranges = SliceRanges(node, in.shape, &dropped)) {
    start = ContiguousRunStart(in.shape, *ranges);
  }
  if (!start) return std::nullopt;
  return *start * DataTypeSize(out.dtype);
}

}  // namespace ge
