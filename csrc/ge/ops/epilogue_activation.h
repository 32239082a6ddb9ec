// The activations a FusedMatMul applies to its product (attr `fused_op_type`), declared once.
// The op's InferShape, the library-epilogue rule (MatMulV2 + activation -> FusedMatMul) and
// every device kernel read this table; a device maps the enum to its own kernel bodies.
// Adding an activation: one row here and one body per device kernel.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ge/ir/graph.h"

namespace ge {

enum class EpilogueActivation { kRelu, kGelu, kGeluTanh, kSigmoid, kTanh, kSilu };

struct EpilogueActivationDef {
  EpilogueActivation activation;
  std::string_view name;     // the value of FusedMatMul's fused_op_type
  std::string_view op_type;  // the IR op this activation is when it reads a product
  // Whether a node of op_type computes exactly this activation (attrs such as Gelu's
  // `approximate` or Swish's `scale` decide); null: every node of op_type does.
  bool (*matches)(const Node& node) = nullptr;
};

const std::vector<EpilogueActivationDef>& EpilogueActivations();
std::optional<EpilogueActivation> EpilogueActivationNamed(std::string_view name);
std::string_view EpilogueActivationName(EpilogueActivation activation);
// The activation `node` computes, if it is one of the table's.
std::optional<EpilogueActivation> EpilogueActivationOf(const Node& node);
// "relu, gelu, ...": for error messages and docs.
std::string EpilogueActivationNames();

}  // namespace ge
