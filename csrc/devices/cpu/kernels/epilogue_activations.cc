#include "devices/cpu/kernels/epilogue_activations.h"

#include <ATen/ops/gelu.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/tanh.h>

namespace ge::cpu {

const CpuEpilogue* FindCpuEpilogue(EpilogueActivation activation) {
  static const CpuEpilogue kTable[] = {
      // No oneDNN post-op for ReLU: oneDNN's turns NaN into 0 (a max with 0 that returns the 0
      // when the value is NaN), torch's propagates it -- the engine's primitives leave it to
      // apply_in_place after them (a pass over the output, ~1-2% of a batch-1 ResNet).
      {EpilogueActivation::kRelu, [](at::Tensor& y) { at::relu_(y); }, onednn::Activation::kNone},
      {EpilogueActivation::kGelu, [](at::Tensor& y) { at::gelu_out(y, y, "none"); }, onednn::Activation::kGeluErf},
      {EpilogueActivation::kGeluTanh, [](at::Tensor& y) { at::gelu_out(y, y, "tanh"); }, onednn::Activation::kGeluTanh},
      {EpilogueActivation::kSigmoid, [](at::Tensor& y) { at::sigmoid_out(y, y); }, onednn::Activation::kSigmoid},
      {EpilogueActivation::kTanh, [](at::Tensor& y) { at::tanh_out(y, y); }, onednn::Activation::kTanh},
      {EpilogueActivation::kSilu, [](at::Tensor& y) { at::silu_out(y, y); }, onednn::Activation::kSilu},
  };
  for (const CpuEpilogue& row : kTable)
    if (row.activation == activation) return &row;
  return nullptr;
}

void FinishAfterPrimitive(const CpuEpilogue* epilogue, at::Tensor& y) {
  if (epilogue != nullptr && epilogue->primitive_post_op == onednn::Activation::kNone) epilogue->apply_in_place(y);
}

}  // namespace ge::cpu
