// How a generated kernel spells its sizes and finds its elements: each extent, stride and
// concat bound is a literal or, with run-time sizes, an entry of the `sizes` array (S) named by
// what it is; each input is read contiguously, broadcast or through strides. The C++ writer
// (cpp_codegen.cc) asks this for index expressions and leaves the arithmetic of the ops to
// cpp_scalar/cpp_vector.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ge/autofuse/fixed_sizes.h"
#include "ge/autofuse/kernel_ir.h"

namespace ge::autofuse {

// How an input is read along a row.
enum class Access { kContiguous, kBroadcast, kGeneral };

struct InputPlan {
  Access access;
  std::vector<int64_t> strides;  // per iteration axis; 0 where broadcast
};

class KernelAddressing {
 public:
  // `chunked`: the kernel's single row is cut into chunks (no outer coordinates o<d>).
  KernelAddressing(const KernelIR& k, bool run_time_sizes, bool chunked);

  // A size (extent, stride, offset) named by what it is (`key`, from the kernel's structure
  // only, so one key always names one value): a literal, or with run-time sizes its entry of S
  // -- unless it is `fixed`: made only of dims that every instance of the graph shares
  // (fixed_sizes.h). `expr` is the size over the graph's symbols, when the buffers' symbolic
  // shapes give it.
  std::string Size(const std::string& key, int64_t value, bool fixed, std::optional<SymExpr> expr) const;
  std::string RowSize() const;   // elements per row
  std::string RowCount() const;  // rows
  std::string Dim(int d) const;
  // The number of iteration points below axis d (the stride of axis d in the iteration space).
  std::string Below(int d) const;
  std::string Stride(size_t input, int d) const;
  // Where input `input`'s reads start: 0, or a fused slice's offset (KBuffer::offset).
  std::string Origin(size_t input) const;
  // Statements giving the outer coordinates o<d> of row `row` (each line starts with `indent`).
  std::string OuterCoordinates(const std::string& row, const std::string& indent) const;
  // Input `input`'s row base from the outer coordinates o<d>.
  std::string RowBase(size_t input) const;

  // Input `input`'s element `i` of this row, relative to its row base `base<input>`.
  std::string InnerIndex(size_t input, const std::string& i) const;
  // Element `i`'s coordinate along inner axis d.
  std::string InnerCoordinate(int d, const std::string& i) const;
  // The coordinate along iteration axis `d` of element `index` of this row (or chunk).
  std::string Coordinate(int d, const std::string& index) const;
  // Where concat part k starts and ends along the concat axis, and input b's dense stride of axis d.
  std::string PartStart(const KOp& op, size_t k) const;
  std::string PartEnd(const KOp& op, size_t k) const;
  std::string PartStride(int b, int d) const;

  const InputPlan& plan(size_t input) const { return plans_[input]; }
  size_t num_inputs() const { return plans_.size(); }
  // The values S holds, in order, and each over the symbols where known.
  const std::vector<int64_t>& sizes() const { return sizes_; }
  const std::vector<std::optional<SymExpr>>& size_exprs() const { return size_exprs_; }

 private:
  InputPlan Plan(const KBuffer& buffer) const;

  const KernelIR& k_;
  int rank_;
  bool run_time_sizes_;
  bool chunked_;
  FixedSizes fixed_;  // which sizes stay literals with run-time sizes
  std::vector<InputPlan> plans_;
  mutable std::vector<int64_t> sizes_;
  mutable std::vector<std::optional<SymExpr>> size_exprs_;
  mutable std::map<std::string, size_t> size_index_;  // which entry of S each named size is
};

}  // namespace ge::autofuse
