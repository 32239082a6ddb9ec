#include "ge/ops/epilogue_activation.h"

namespace ge {
namespace {

bool GeluIs(const Node& node, std::string_view approximate) {
  return node.GetAttrOr<std::string>("approximate", "none") == approximate;
}

}  // namespace

const std::vector<EpilogueActivationDef>& EpilogueActivations() {
  static const std::vector<EpilogueActivationDef> table = {
      {EpilogueActivation::kRelu, "relu", "Relu"},
      {EpilogueActivation::kGelu, "gelu", "Gelu", [](const Node& n) { return GeluIs(n, "none"); }},
      {EpilogueActivation::kGeluTanh, "gelu_tanh", "Gelu", [](const Node& n) { return GeluIs(n, "tanh"); }},
      {EpilogueActivation::kSigmoid, "sigmoid", "Sigmoid"},
      {EpilogueActivation::kTanh, "tanh", "Tanh"},
      {EpilogueActivation::kSilu, "silu", "Swish",
       [](const Node& n) { return n.GetAttrOr<double>("scale", 1.0) == 1.0; }},
  };
  return table;
}

std::optional<EpilogueActivation> EpilogueActivationNamed(std::string_view name) {
  for (const EpilogueActivationDef& def : EpilogueActivations())
    if (def.name == name) return def.activation;
  return std::nullopt;
}

std::string_view EpilogueActivationName(EpilogueActivation activation) {
  for (const EpilogueActivationDef& def : EpilogueActivations())
    if (def.activation == activation) return def.name;
  return "?";
}

std::optional<EpilogueActivation> EpilogueActivationOf(const Node& node) {
  for (const EpilogueActivationDef& def : EpilogueActivations())
    if (node.type() == def.op_type && (def.matches == nullptr || def.matches(node))) return def.activation;
  return std::nullopt;
}

std::string EpilogueActivationNames() {
  std::string names;
  for (const EpilogueActivationDef& def : EpilogueActivations()) {
    if (!names.empty()) names += ", ";
    names += def.name;
  }
  return names;
}

}  // namespace ge
