#include "ge/autofuse/kernel_addressing.h"

#include <fmt/format.h>

#include <algorithm>

namespace ge::autofuse {

KernelAddressing::KernelAddressing(const KernelIR& k, bool run_time_sizes, bool chunked)
    : k_(k), rank_(static_cast<int>(k.shape.size())), run_time_sizes_(run_time_sizes), chunked_(chunked), fixed_(k) {
  for (const KBuffer& in : k.inputs) plans_.push_back(Plan(in));
}

std::string KernelAddressing::Size(const std::string& key, int64_t value, bool fixed,
                                   std::optional<SymExpr> expr) const {
  if (!run_time_sizes_ || fixed) return fmt::format("int64_t{{{}}}", value);
  auto [it, added] = size_index_.emplace(key, sizes_.size());
  if (added) {
    sizes_.push_back(value);
    size_exprs_.push_back(std::move(expr));
  }
  return fmt::format("S[{}]", it->second);
}

std::string KernelAddressing::RowSize() const {
  return Size("row", k_.row_size(), fixed_.Axes(k_.inner_from, rank_), fixed_.AxesProduct(k_.inner_from, rank_));
}

std::string KernelAddressing::RowCount() const {
  return Size("rows", k_.rows(), fixed_.Axes(0, k_.inner_from), fixed_.AxesProduct(0, k_.inner_from));
}

std::string KernelAddressing::Dim(int d) const {
  return Size(fmt::format("dim{}", d), k_.shape[static_cast<size_t>(d)], fixed_.Axes(d, d + 1),
              fixed_.AxesProduct(d, d + 1));
}

std::string KernelAddressing::Below(int d) const {
  int64_t below = 1;
  for (int e = d + 1; e < rank_; ++e) below *= k_.shape[static_cast<size_t>(e)];
  return Size(fmt::format("below{}", d), below, fixed_.Axes(d + 1, rank_), fixed_.AxesProduct(d + 1, rank_));
}

std::string KernelAddressing::Stride(size_t input, int d) const {
  const KBuffer& in = k_.inputs[input];
  // A permuted input's stride may come from any of its dims; a broadcast one's is the product
  // of its dims right of the one aligned with axis d (or 0 where that one is 1: in the text).
  const int from = in.strides.empty() ? std::max(0, d - (rank_ - static_cast<int>(in.desc.rank())) + 1) : 0;
  return Size(fmt::format("in{}.stride{}", input, d), plans_[input].strides[static_cast<size_t>(d)],
              fixed_.InputDims(input, from), fixed_.InputStride(k_, input, d));
}

std::string KernelAddressing::Origin(size_t input) const {
  const int64_t offset = k_.inputs[input].offset;
  if (offset == 0) return "0";
  // The slice's begins are constants; the offset is the same in every instance when the sliced
  // tensor's dims are.
  return Size(fmt::format("in{}.origin", input), offset, fixed_.InputDims(input, 0), std::nullopt);
}

std::string KernelAddressing::OuterCoordinates(const std::string& row, const std::string& indent) const {
  std::string out = fmt::format("{}int64_t rest = {};\n", indent, row);
  for (int d = k_.inner_from - 1; d >= 0; --d) {
    if (d == 0)
      out += fmt::format("{}const int64_t o{} = rest;\n", indent, d);
    else
      out += fmt::format("{0}const int64_t o{1} = rest % {2}; rest /= {2};\n", indent, d, Dim(d));
  }
  return out + fmt::format("{}(void)rest;\n", indent);
}

std::string KernelAddressing::RowBase(size_t input) const {
  std::string expr = Origin(input);
  for (int d = 0; d < k_.inner_from; ++d)
    if (plans_[input].strides[static_cast<size_t>(d)] != 0) expr += fmt::format(" + o{} * {}", d, Stride(input, d));
  return expr;
}

InputPlan KernelAddressing::Plan(const KBuffer& buffer) const {
  InputPlan p;
  p.strides = IterationStrides(buffer, k_.shape);
  bool contiguous = true, broadcast = true;
  int64_t expect = 1;
  for (int d = rank_ - 1; d >= k_.inner_from; --d) {
    const int64_t st = p.strides[static_cast<size_t>(d)];
    if (st != 0) broadcast = false;
    if (st != expect && k_.shape[static_cast<size_t>(d)] != 1) contiguous = false;
    expect *= k_.shape[static_cast<size_t>(d)];
  }
  p.access = broadcast ? Access::kBroadcast : contiguous ? Access::kContiguous : Access::kGeneral;
  return p;
}

std::string KernelAddressing::InnerIndex(size_t input, const std::string& i) const {
  const InputPlan& p = plans_[input];
  if (p.access == Access::kBroadcast) return fmt::format("base{}", input);
  if (p.access == Access::kContiguous) return fmt::format("base{} + {}", input, i);
  std::string expr = fmt::format("base{}", input);
  for (int d = rank_ - 1; d >= k_.inner_from; --d)
    if (p.strides[static_cast<size_t>(d)] != 0)
      expr += fmt::format(" + {} * {}", InnerCoordinate(d, i), Stride(input, d));
  return expr;
}

// The last axis needs no division (nothing is below it) and the first inner axis no modulo (i is
// within the row): with run-time sizes a division by a variable costs tens of cycles per
// element, which the compiler cannot fold.
std::string KernelAddressing::InnerCoordinate(int d, const std::string& i) const {
  const std::string quotient = d == rank_ - 1 ? fmt::format("({})", i) : fmt::format("(({}) / {})", i, Below(d));
  return d == k_.inner_from ? quotient : fmt::format("({} % {})", quotient, Dim(d));
}

std::string KernelAddressing::Coordinate(int d, const std::string& index) const {
  if (!chunked_ && d < k_.inner_from) return fmt::format("o{}", d);
  return InnerCoordinate(d, index);
}

std::string KernelAddressing::PartStart(const KOp& op, size_t k) const {
  return Size(fmt::format("in{}.start", op.buffers[k]), op.offsets[k], fixed_.Parts(op, k, false),
              fixed_.PartOffset(op, k, false));
}

// (offsets holds one start per part: a part ends at its start plus its extent along the axis)
std::string KernelAddressing::PartEnd(const KOp& op, size_t k) const {
  const int b = op.buffers[k];
  const int64_t extent = k_.inputs[static_cast<size_t>(b)].desc.shape[static_cast<size_t>(op.axis)];
  return Size(fmt::format("in{}.end", b), op.offsets[k] + extent, fixed_.Parts(op, k, true),
              fixed_.PartOffset(op, k, true));
}

std::string KernelAddressing::PartStride(int b, int d) const {
  const Shape& s = k_.inputs[static_cast<size_t>(b)].desc.shape;
  int64_t stride = 1;
  for (size_t e = static_cast<size_t>(d) + 1; e < s.size(); ++e) stride *= s[e];
  return Size(fmt::format("in{}.dense{}", b, d), stride, fixed_.InputDims(static_cast<size_t>(b), d + 1),
              fixed_.InputDimsProduct(static_cast<size_t>(b), d + 1));
}

}  // namespace ge::autofuse
