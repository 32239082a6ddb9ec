#include "ge/autofuse/fixed_sizes.h"

#include <algorithm>
#include <map>

#include "ge/ops/symbolic_infer.h"

namespace ge::autofuse {

// An iteration axis is fixed when a buffer spanning it says so: an input's dims other than 1
// are the iteration's, right-aligned (broadcasting); a concat part's too, except along the concat
// axis, whose extent is fixed when every part's is; an output's when it is shaped like the
// iteration space. An extent of 1 is 1 in every instance (Dynamo specializes sizes 0 and 1).
FixedSizes::FixedSizes(const KernelIR& k) {
  for (const KBuffer& in : k.inputs) {
    inputs_.push_back(in.desc.FixedDims());
    const bool known = in.desc.symbolic.size() == in.desc.shape.size();
    input_dims_.push_back(known ? in.desc.symbolic : std::vector<SymExpr>{});
  }
  const int rank = static_cast<int>(k.shape.size());
  axes_.assign(static_cast<size_t>(rank), false);
  axis_exprs_.assign(static_cast<size_t>(rank), std::nullopt);
  std::map<int, bool> concat_axes;  // concat axis -> every part's extent fixed
  for (const KOp& op : k.ops)
    if (op.kind == OpKind::kConcat) concat_axes[op.axis] = Parts(op, op.buffers.size() - 1, true);
  auto learn = [&](const TensorDesc& desc, const std::vector<bool>& dims, bool concat_part) {
    const int offset = rank - static_cast<int>(dims.size());
    const bool named = desc.symbolic.size() == dims.size();
    for (int j = 0; j < static_cast<int>(dims.size()); ++j) {
      const int d = j + offset;
      if (d < 0 || (concat_part && concat_axes.count(d))) continue;
      const int64_t dim = desc.shape[static_cast<size_t>(j)];
      if (dim == 1 || dim != k.shape[static_cast<size_t>(d)]) continue;
      if (dims[static_cast<size_t>(j)]) axes_[static_cast<size_t>(d)] = true;
      if (named && !axis_exprs_[static_cast<size_t>(d)])
        axis_exprs_[static_cast<size_t>(d)] = desc.symbolic[static_cast<size_t>(j)];
    }
  };
  for (size_t i = 0; i < k.inputs.size(); ++i)
    if (k.inputs[i].strides.empty()) learn(k.inputs[i].desc, inputs_[i], k.inputs[i].concat_part);
  for (const KBuffer& out : k.outputs)
    if (out.desc.shape == k.shape) learn(out.desc, out.desc.FixedDims(), false);
  for (const auto& [axis, parts_fixed] : concat_axes)
    if (parts_fixed) axes_[static_cast<size_t>(axis)] = true;
  for (const KOp& op : k.ops)
    if (op.kind == OpKind::kConcat && !axis_exprs_[static_cast<size_t>(op.axis)])
      axis_exprs_[static_cast<size_t>(op.axis)] = PartOffset(op, op.buffers.size() - 1, true);
  for (size_t d = 0; d < axes_.size(); ++d) {
    axes_[d] = axes_[d] || k.shape[d] == 1;
    if (k.shape[d] == 1) axis_exprs_[d] = SymExpr::Constant(1);
  }
}

bool FixedSizes::Axes(int from, int to) const {
  for (int d = from; d < to; ++d)
    if (!axes_[static_cast<size_t>(d)]) return false;
  return true;
}

bool FixedSizes::InputDims(size_t input, int from) const {
  const std::vector<bool>& dims = inputs_[input];
  for (size_t d = static_cast<size_t>(from); d < dims.size(); ++d)
    if (!dims[d]) return false;
  return true;
}

bool FixedSizes::Parts(const KOp& concat, size_t k, bool through) const {
  for (size_t j = 0; j < k + (through ? 1 : 0); ++j)
    if (!inputs_[static_cast<size_t>(concat.buffers[j])][static_cast<size_t>(concat.axis)]) return false;
  return true;
}

std::optional<SymExpr> FixedSizes::AxesProduct(int from, int to) const {
  SymDims extents;
  for (int d = from; d < to; ++d) {
    if (!axis_exprs_[static_cast<size_t>(d)]) return std::nullopt;
    extents.push_back(*axis_exprs_[static_cast<size_t>(d)]);
  }
  return ProductOfDims(extents, 0, extents.size());
}

std::optional<SymExpr> FixedSizes::InputDimsProduct(size_t input, int from) const {
  const std::vector<SymExpr>& dims = input_dims_[input];
  if (dims.empty() && !inputs_[input].empty()) return std::nullopt;
  return ProductOfDims(dims, static_cast<size_t>(std::max(from, 0)), dims.size());
}

std::optional<SymExpr> FixedSizes::InputStride(const KernelIR& k, size_t input, int d) const {
  const KBuffer& in = k.inputs[input];
  if (!in.strides.empty()) return PermutedStride(k, input, d);
  const int lead = static_cast<int>(k.shape.size()) - static_cast<int>(in.desc.shape.size());
  if (d < lead || in.desc.shape[static_cast<size_t>(d - lead)] == 1) return SymExpr::Constant(0);
  return InputDimsProduct(input, d - lead + 1);
}

// A permuted input's stride along axis d is the dense stride of the stored dim that axis reads:
// the one whose extent is the axis' and whose stride (the product of the dims after it) is the
// stride read. Two stored dims can only both match when the dims between them are 1 (a constant
// in every instance), so their products are the same expression.
std::optional<SymExpr> FixedSizes::PermutedStride(const KernelIR& k, size_t input, int d) const {
  const KBuffer& in = k.inputs[input];
  const int64_t stride = in.strides[static_cast<size_t>(d)];
  if (stride == 0) return SymExpr::Constant(0);
  const Shape& shape = in.desc.shape;
  int64_t after = 1;
  for (int e = static_cast<int>(shape.size()) - 1; e >= 0; --e) {
    if (after == stride && shape[static_cast<size_t>(e)] == k.shape[static_cast<size_t>(d)])
      return InputDimsProduct(input, e + 1);
    after *= shape[static_cast<size_t>(e)];
  }
  return std::nullopt;
}

std::optional<SymExpr> FixedSizes::PartOffset(const KOp& concat, size_t k, bool through) const {
  SymExpr out = SymExpr::Constant(concat.offsets.empty() ? 0 : concat.offsets[0]);
  for (size_t j = 0; j < k + (through ? 1 : 0); ++j) {
    const std::vector<SymExpr>& dims = input_dims_[static_cast<size_t>(concat.buffers[j])];
    if (dims.empty()) return std::nullopt;
    out = SymExpr::Combine(SymExpr::Op::kAdd, out, dims[static_cast<size_t>(concat.axis)]);
  }
  return out;
}

}  // namespace ge::autofuse
