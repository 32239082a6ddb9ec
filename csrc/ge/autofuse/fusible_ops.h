// Which IR ops auto-fusion may put in a kernel, and how each becomes kernel IR.
#pragma once

#include <optional>

#include "ge/autofuse/kernel_builder.h"

namespace ge::autofuse {

struct FusibleInfo {
  // For ops that reduce (reductions, softmax, layer norm): the first of the trailing axes they
  // reduce; a group's row is exactly those axes. nullopt for elementwise ops.
  std::optional<int> row_axis;
  // Per output: true when the output has one value per row (reductions, norm statistics).
  std::vector<bool> row_outputs;
  // How many leading inputs carry data; the rest (axes, target shapes) are compile-time
  // parameters the lowering reads from the node itself.
  int data_inputs = -1;  // -1: all
  // The op reads its data inputs itself, as loads (a transpose through permuted strides, a
  // concat part by part): they must come from outside the group, and its lowering gets no
  // operand ops.
  bool loads_from_outside = false;

  int DataInputs(const Node* node) const { return data_inputs < 0 ? node->num_inputs() : data_inputs; }
};

// nullopt when `node` cannot be fused: unknown op, unsupported dtype or attrs, reduction over
// axes that are not trailing, control edges or side effects.
std::optional<FusibleInfo> Fusible(const Node* node);

// A node that reads a value an in-place op overwrites later is ordered before that op by a
// control edge (OrderInplaceUpdates: an optimizer step reading the parameter it then updates).
// The fused kernel takes such edges over, so they do not keep a node out of fusion; any other
// control edge does.
bool ControlEdgesAllowFusion(const Node* node);

// Emits `node` into `b`; `args` are the op ids of its data inputs (-1 for an absent optional
// input; empty for ops that load from outside). Returns one op id per output.
Expected<std::vector<int>> LowerNode(KernelBuilder& b, const Node* node, const std::vector<int>& args);

}  // namespace ge::autofuse
