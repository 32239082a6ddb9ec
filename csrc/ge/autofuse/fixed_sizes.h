// Which sizes of a kernel are the same in every instance of a graph with symbolic sizes: those
// whose expression over the graph's size symbols (the buffers' TensorDesc::symbolic, from the
// optimized size template) is a constant equal to the size -- TensorDesc::FixedDims' rule. With
// run-time sizes the C++ generator writes a size made only of such dims as a literal, so the
// compiler sees those loop bounds and strides; the text then holds their values, which every
// instance shares. A dim taken as fixed wrongly only costs another library, never numbers: the
// literal is the instance's own value.
#pragma once

#include <optional>
#include <vector>

#include "ge/autofuse/kernel_ir.h"

namespace ge::autofuse {

class FixedSizes {
 public:
  explicit FixedSizes(const KernelIR& k);

  // Iteration axes [from, to) are fixed.
  bool Axes(int from, int to) const;
  // Input `input`'s dims from `from` on are fixed.
  bool InputDims(size_t input, int from) const;
  // The extents along the concat axis of parts 0..k-1 (and of part k, `through`) are fixed.
  bool Parts(const KOp& concat, size_t k, bool through) const;

  // The same sizes as expressions over the graph's size symbols, from the buffers'
  // TensorDesc::symbolic (nullopt where a dim has none): what a kernel's run-time size is at
  // any sizes, so that its `sizes` argument can be computed without writing the kernel again.
  // The product of iteration axes [from, to).
  std::optional<SymExpr> AxesProduct(int from, int to) const;
  // The element stride of input `input` along iteration axis d (inputs read without a
  // permutation; 0 where it broadcasts).
  std::optional<SymExpr> InputStride(const KernelIR& k, size_t input, int d) const;
  // The product of input `input`'s dims from `from` on.
  std::optional<SymExpr> InputDimsProduct(size_t input, int from) const;
  // Where concat part k starts along the concat axis (its end with `through`).
  std::optional<SymExpr> PartOffset(const KOp& concat, size_t k, bool through) const;

 private:
  std::optional<SymExpr> PermutedStride(const KernelIR& k, size_t input, int d) const;
  bool InputDimFixed(size_t input, size_t d) const;

  Shape shape_;                                     // the iteration space
  std::vector<Shape> input_shapes_;                 // per input
  std::vector<std::vector<SymExpr>> input_dims_;    // per input: its symbolic dims (empty: not known)
  std::vector<std::optional<SymExpr>> axis_exprs_;  // per iteration axis (a constant where one is known)
};

}  // namespace ge::autofuse
