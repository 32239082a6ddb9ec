#include "ge/runtime/fused_kernel_def.h"

namespace ge {

int FusedKernelDef::ProducerInputs() const {
  int n = 0;
  for (const FusedProducerDef& p : producers) n += p.num_inputs;
  return n;
}

std::optional<FusedKernelDef::ProducerInput> FusedKernelDef::ProducerOfInput(int index) const {
  int first = 0;
  for (const FusedProducerDef& p : producers) {
    if (index >= first && index < first + p.num_inputs) return ProducerInput{&p, index - first};
    first += p.num_inputs;
  }
  return std::nullopt;
}

std::vector<TensorDesc> FusedKernelDef::Workspaces() const {
  std::vector<TensorDesc> out;
  for (const FusedProducerDef& p : producers) out.push_back(p.output);
  return out;
}

}  // namespace ge
