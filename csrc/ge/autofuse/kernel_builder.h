// Builds a KernelIR from graph values: external values become loads (scalar constants become
// immediates), ops become KOps whose row-levelness follows from their operands. An op equal to
// one already built (same kind, function, operands, type and value) is that op: lowerings that
// spell the same terms (a softmax and the log-sum-exp of its row) compute them once.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "ge/autofuse/kernel_ir.h"
#include "ge/ops/rewrite_utils.h"
#include "ge/ir/graph.h"

namespace ge::autofuse {

class KernelBuilder {
 public:
  KernelBuilder(std::string name, Shape shape, int inner_from);

  // The value of `v`, produced outside the group: a load of a new input buffer (one per
  // distinct value), or an immediate for a one-element constant.
  Expected<int> External(Value v);
  // `v` read through a permutation: iteration axis d is axis perm[d] of `v` (a fused Transpose).
  Expected<int> ExternalPermuted(Value v, const std::vector<int64_t>& perm);
  // A slice of `v` (per axis of v: SliceRanges; axis `dropped`, if not -1, is selected away),
  // read where it lies in v: a load at an offset through v's strides times the steps; the slice
  // broadcasts into the iteration space.
  Expected<int> ExternalSliced(Value v, const std::vector<AxisRange>& ranges, int64_t dropped);
  // The concatenation of outside values along `axis` (a fused ConcatV2): one input per part.
  Expected<int> ExternalConcat(const std::vector<Value>& parts, int64_t axis);
  int Const(double value, ScalarType type = ScalarType::kFloat);
  int Unary(KFn fn, int a);
  // Arithmetic keeps the operand type; comparisons ("lt", "eq", ...) and "and"/"or" give bool.
  int Binary(KFn fn, int a, int b);
  int Select(int cond, int a, int b);
  int Cast(int a, ScalarType type);
  int Reduce(KFn fn, int a);
  // Makes `op` the value of a new output of `desc`; returns the output index.
  int Store(int op, const TensorDesc& desc);

  const KOp& op(int id) const { return ir_.ops[static_cast<size_t>(id)]; }
  const KernelIR& ir() const { return ir_; }
  const std::vector<Value>& external_inputs() const { return external_; }
  KernelIR Take() { return std::move(ir_); }

 private:
  int Add(KOp op);
  int AddLoad(Value v, KBuffer buffer, ScalarType type);

  KernelIR ir_;
  std::vector<Value> external_;  // by input buffer index
  std::map<std::pair<const Node*, int>, int> loaded_;
  // kind, type, fn, operands, the bits of `value` -> op index (every kind but loads and concats)
  using OpKey = std::tuple<OpKind, ScalarType, KFn, std::vector<int>, uint64_t>;
  std::map<OpKey, int> built_;
};

}  // namespace ge::autofuse
