// Small queries and edits shared by the passes. They encode the rules that keep rewrites safe:
// graph outputs, values updated in place and control-ordered nodes are left alone.
#pragma once

#include <optional>
#include <vector>

#include "ge/ir/graph.h"

namespace ge {

// True when some user reads `v` through an input the op updates in place (its memory is
// written by that op: a graph input updated in place).
bool IsMutatedValue(Value v);
// True when NetOutput reads `v`.
bool FeedsNetOutput(Value v);
bool HasControlEdges(const Node* node);
// A Reshape of the whole tensor (axis 0, num_axes -1): the same bytes read with another shape.
bool IsPlainReshape(const Node* node);
// A node whose output is its input's bytes under another shape: a plain Reshape, Flatten or
// Identity with one output and no control edges.
bool IsSameBytesReshape(const Node* node);
bool HasSingleUser(Value v);
// An inner link of a pattern a rewrite replaces whole: read by exactly one op, no control edges,
// not a graph output.
bool IsInnerLink(Value v);
// The shape of the value's output.
const Shape& ShapeOf(Value v);

// Whether `v` may become a graph output without aliasing anything the caller sees: computed by
// a native kernel into bytes of its own (not a graph input, a constant, an input updated in
// place, or a fallback op's result, which may be a view), and not already an output. (Autograd
// accumulates into returned gradients in place, so an output aliasing another would corrupt it.)
bool IsPrivateComputedValue(Value v);
// Whether every user of `node`'s single output may read `replacement` instead: same dtype and
// shape, `node` has one output, no control edges, neither value is updated in place, and if
// `node` feeds NetOutput, `replacement` is a private computed value.
bool CanBypass(const Node* node, Value replacement);
// Points every user of node:0 at `replacement` and removes `node`.
Status Bypass(Graph& graph, Node* node, Value replacement);

// The tensor of a Const producer, or nullptr.
const Tensor* ConstValue(Value v);
// Integer contents of a Const producer (int32/int64), or nullopt.
std::optional<std::vector<int64_t>> ConstInts(Value v);
// One axis of a slice: `length` elements from `begin`, `step` apart.
struct AxisRange {
  int64_t begin = 0;
  int64_t length = 0;
  int64_t step = 1;
};
// What a node takes of input 0 (of shape `dims`), per axis (whole where not sliced): a
// StridedSliceV2 with constant begin/end/axes/strides (clamped like its shape inference, each
// axis sliced at most once, steps positive), or a GatherV2 of one constant 0-d index along a
// constant axis (torch's select; `*dropped` is that axis, which the output does not have, else
// -1). nullopt for anything else, and for a select's index outside its axis (its kernel reports it).
std::optional<std::vector<AxisRange>> SliceRanges(const Node* node, const Shape& dims, int64_t* dropped);
// The value of a one-element float Const (float, double; float16 and bfloat16 widened exactly),
// or nullopt for anything else.
std::optional<double> ConstFloatScalar(Value v);
// True when `v` is a Const whose every element is exactly `x` in its own dtype (numeric types).
bool ConstIsAll(Value v, double x);
// A new Const node holding `value`.
Node* AddConst(Graph& graph, Tensor value, const std::string& name);
// A 1-D index constant (a shape, a permutation, axes) holding `values`, of `dtype` (int64 or int32).
Node* AddIndexConst(Graph& graph, const std::vector<int64_t>& values, const std::string& name,
                    DataType dtype = DataType::kInt64);

// Finishes a node that replaces `old_node`'s single output: takes its FX provenance (fx node,
// source line), verifies and infers it, checks its output desc equals the old one, and points
// every user of the old output at it. The caller removes what is left.
Status SubstituteNode(Graph& graph, Node* old_node, Node* replacement);

// Ops whose effect is more than their outputs: Data, NetOutput, in-place updates, collectives
// (the other ranks wait for them), TorchOp (the fallback may run anything). Never removed for
// being unused.
bool HasSideEffects(const Node* node);

// Removes `node` and then any producer left without users (Const/ops, never Data), so a
// rewrite does not leave dead constants behind.
Status RemoveWithDeadInputs(Graph& graph, Node* node);

}  // namespace ge
