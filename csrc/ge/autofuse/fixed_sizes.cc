#include "ge/autofuse/fixed_sizes.h"

#include <algorithm>
#include <set>

#include "ge/ops/symbolic_infer.h"

namespace ge::autofuse {

namespace {

// The same at every size of the graph's symbols: the expression is a constant equal to the dim.
bool IsFixed(const std::optional<SymExpr>& expr, int64_t dim) { return expr && expr->ConstantValue() == dim; }

}  // namespace

// An iteration axis takes its expression from a buffer spanning it: an input's dims other than 1
// are the iteration's, right-aligned (broadcasting); a concat part's too, except along the concat
// axis, whose extent is the sum of the parts'; an output's when it is shaped like the iteration
// space. Where buffers spell an axis apart, a constant wins (it is the same extent, so the other
// spelling evaluates to it at every size). An extent of 1 is 1 in every instance (Dynamo
// specializes sizes 0 and 1).
FixedSizes::FixedSizes(const KernelIR& k) : shape_(k.shape) {
  for (const KBuffer& in : k.inputs) {
    input_shapes_.push_back(in.desc.shape);
    const bool known = in.desc.symbolic.size() == in.desc.shape.size();
    input_dims_.push_back(known ? in.desc.symbolic : std::vector<SymExpr>{});
  }
  const int rank = static_cast<int>(k.shape.size());
  axis_exprs_.assign(static_cast<size_t>(rank), std::nullopt);
  std::set<int> concat_axes;
  for (const KOp& op : k.ops)
    if (op.kind == OpKind::kConcat) concat_axes.insert(op.axis);
  auto learn = [&](const TensorDesc& desc, bool concat_part) {
    if (desc.symbolic.size() != desc.shape.size()) return;
    const int offset = rank - static_cast<int>(desc.shape.size());
    for (int j = 0; j < static_cast<int>(desc.shape.size()); ++j) {
      const int d = j + offset;
      if (d < 0 || (concat_part && concat_axes.count(d))) continue;
      const int64_t dim = desc.shape[static_cast<size_t>(j)];
      if (dim == 1 || dim != k.shape[static_cast<size_t>(d)]) continue;
      std::optional<SymExpr>& axis = axis_exprs_[static_cast<size_t>(d)];
      const SymExpr& expr = desc.symbolic[static_cast<size_t>(j)];
      if (!axis || (!IsFixed(axis, dim) && IsFixed(expr, dim))) axis = expr;
    }
  };
  for (const KBuffer& in : k.inputs)
    if (in.strides.empty()) learn(in.desc, in.concat_part);
  for (const KBuffer& out : k.outputs)
    if (out.desc.shape == k.shape) learn(out.desc, false);
  for (const KOp& op : k.ops) {
    if (op.kind != OpKind::kConcat) continue;
    std::optional<SymExpr>& axis = axis_exprs_[static_cast<size_t>(op.axis)];
    const int64_t extent = k.shape[static_cast<size_t>(op.axis)];
    if (!axis) axis = PartOffset(op, op.buffers.size() - 1, true);
    if (!IsFixed(axis, extent) && Parts(op, op.buffers.size() - 1, true)) axis = SymExpr::Constant(extent);
  }
  for (size_t d = 0; d < axis_exprs_.size(); ++d)
    if (k.shape[d] == 1) axis_exprs_[d] = SymExpr::Constant(1);
}

bool FixedSizes::Axes(int from, int to) const {
  for (int d = from; d < to; ++d)
    if (!IsFixed(axis_exprs_[static_cast<size_t>(d)], shape_[static_cast<size_t>(d)])) return false;
  return true;
}

bool FixedSizes::InputDimFixed(size_t input, size_t d) const {
  const std::vector<SymExpr>& dims = input_dims_[input];
  return !dims.empty() && IsFixed(dims[d], input_shapes_[input][d]);
}

bool FixedSizes::InputDims(size_t input, int from) const {
  for (size_t d = static_cast<size_t>(from); d < input_shapes_[input].size(); ++d)
    if (!InputDimFixed(input, d)) return false;
  return true;
}

bool FixedSizes::Parts(const KOp& concat, size_t k, bool through) const {
  for (size_t j = 0; j < k + (through ? 1 : 0); ++j)
    if (!InputDimFixed(static_cast<size_t>(concat.buffers[j]), static_cast<size_t>(concat.axis))) return false;
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
  if (dims.empty() && !input_shapes_[input].empty()) return std::nullopt;
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
