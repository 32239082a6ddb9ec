// The CPU bodies of FusedMatMul's and FusedConv2D's epilogue activations
// (ge/ops/epilogue_activation.h): the in-place ATen call of the ATen paths, ATen oneDNN's
// post-op name (products) and the engine's oneDNN primitive's (convolutions). One row per activation.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

#include "devices/onednn/conv2d.h"
#include "ge/ops/epilogue_activation.h"

namespace ge::cpu {

struct CpuEpilogue {
  EpilogueActivation activation;
  void (*apply_in_place)(at::Tensor& y);
  const char* onednn_post_op;       // mkldnn::_linear_pointwise's `attr`
  const char* onednn_algorithm;     // its `algorithm` (GELU's form), or null
  onednn::Activation conv_post_op;  // devices/onednn/conv2d.h
};

// The row for `activation`; every activation of the core's table has one (checked by a test).
const CpuEpilogue* FindCpuEpilogue(EpilogueActivation activation);

}  // namespace ge::cpu
