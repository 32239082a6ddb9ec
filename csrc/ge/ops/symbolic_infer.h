// Symbolic shape inference: every value's shape as expressions over a graph's size symbols
// (TensorDesc::symbolic), derived node by node from the inputs' expressions and the sizes the
// graph holds, beside the concrete InferShape that has already run for one set of sizes.
//
// A rule (OpDef::InferSymbolic) only names what the concrete inference computed: it may rely on
// the node having been verified, and it leaves an output unknown (empty) when it cannot name it.
// The walker checks every expression it is given against the concrete shape at the graph's
// sizes, so a wrong rule is an error naming the node, never a wrong annotation.
#pragma once

#include <optional>
#include <vector>

#include "ge/ops/op_proto.h"

namespace ge {

// Where a graph's size symbols sit in it: what a rule reads instead of the literal the node holds
// at the current sizes. Implemented by the size template (symbolic/size_template.h).
class SizeExprs {
 public:
  virtual ~SizeExprs() = default;
  // Dim `dim` of graph input `data` as an expression, or nullptr when it is the same at every size.
  virtual const SymExpr* InputDim(const Node& data, int64_t dim) const = 0;
  // Element `index` of constant `constant`, or nullptr when it is the same at every size.
  virtual const SymExpr* ConstElement(const Node& constant, int64_t index) const = 0;
  // Whether an attribute of `node` holds a size (rules read attributes as literals, so such a
  // node's outputs are left unknown).
  virtual bool HasAttrSizes(const Node& node) const = 0;
  // Whether any element of constant `constant` holds a size.
  virtual bool HasConstSizes(const Node& constant) const = 0;
};

using SymDims = std::vector<SymExpr>;

// What a symbolic rule sees: the node as InferShape saw it (its output descs already inferred)
// plus the inputs' symbolic dims and the sizes held by constant inputs.
class SymbolicInferContext : public InferContext {
 public:
  SymbolicInferContext(Node& node, const OpProto& proto, const SizeExprs& sizes, const std::vector<int64_t>& values)
      : InferContext(node, proto),
        num_declared_inputs_(static_cast<int>(proto.inputs.size())),
        sizes_(sizes),
        values_(values) {}
  // The prototype's declared inputs (the dynamic one counts once): def_index runs below this.
  int NumDeclaredInputs() const { return num_declared_inputs_; }
  // Declared input `def_index`'s (or the k-th dynamic value's) symbolic dims; empty when unknown.
  const SymDims& Dims(int def_index) const { return Input(def_index).symbolic; }
  const SymDims& DynamicDims(int k) const { return Dynamic(k).symbolic; }
  // The integer elements of the constant feeding input `def_index`, each a size expression where
  // the graph has one; nullopt when the input is not an integer constant.
  std::optional<SymDims> ConstSizes(int def_index) const;
  // `expr` at the graph's current sizes, nullopt when it cannot be evaluated: for rules whose
  // form depends on a sign, as a slice bound's.
  std::optional<int64_t> Value(const SymExpr& expr) const;
  // An axis held as a size (a constant input's element) at the current sizes, mapped into
  // [0, rank); nullopt when it cannot be evaluated or is out of range.
  std::optional<size_t> AxisValue(const SymExpr& axis, size_t rank) const;
  void SetOutput(int i, SymDims dims) { Output(i).symbolic = std::move(dims); }

 private:
  int num_declared_inputs_;
  const SizeExprs& sizes_;
  const std::vector<int64_t>& values_;
};

// Numpy broadcasting of two symbolic shapes: a dim of constant 1 takes the other side's; of two
// expressions the first is kept (the shapes broadcast, so both have the same value).
SymDims BroadcastDims(const SymDims& a, const SymDims& b);
// `axis` (an attribute) mapped into [0, rank) as NormalizeAxis does; nullopt when out of range
// (the node is verified, so a rule that gets nullopt leaves its outputs unknown).
std::optional<size_t> NormalizedAxis(int64_t axis, size_t rank);
// Product of dims [begin, end).
SymExpr ProductOfDims(const SymDims& dims, size_t begin, size_t end);

// Rules shared by many ops.
void InferSymbolicSameAsFirstInput(SymbolicInferContext& ctx);
void InferSymbolicBroadcast(SymbolicInferContext& ctx);

// Sets TensorDesc::symbolic of every value of `graph` (whose descs InferShape has set for the
// sizes `values`) that the rules can name: Data dims from `sizes`, constants' shapes, each node
// from its inputs, and every output of a node whose inputs are all fixed and that holds no size
// as constants. Unnamed values get an empty `symbolic`. `names` are the symbols' names, for errors.
Status InferSymbolicShapes(Graph& graph, const SizeExprs& sizes, const std::vector<int64_t>& values,
                           const std::vector<std::string>& names);

}  // namespace ge
