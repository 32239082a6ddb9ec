// The CPU bodies of FusedMatMul's and FusedConv2D's epilogue activations
// (ge/ops/epilogue_activation.h): the in-place ATen call of the ATen paths and the post-op of
// the engine's oneDNN primitives. One row per activation.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

#include "devices/onednn/post_ops.h"
#include "ge/ops/epilogue_activation.h"

namespace ge::cpu {

struct CpuEpilogue {
  EpilogueActivation activation;
  void (*apply_in_place)(at::Tensor& y);
  // Of the engine's oneDNN primitives (devices/onednn); kNone: they run apply_in_place after.
  onednn::Activation primitive_post_op;
};

// The row for `activation`; every activation of the core's table has one (checked by a test).
const CpuEpilogue* FindCpuEpilogue(EpilogueActivation activation);

// After an engine oneDNN primitive made with `epilogue`'s post-op wrote y: the activation it has
// no post-op for (kNone), applied in place. Null `epilogue`, or one the primitive applied: nothing.
void FinishAfterPrimitive(const CpuEpilogue* epilogue, at::Tensor& y);

// y = activation(y + residual) in place, after a primitive made with neither (`epilogue` null:
// no activation). A float32 y and residual of one dense layout take one pass (with ReLU in it);
// anything else ATen's add_, then the activation's apply_in_place.
void AddResidualThenActivate(const CpuEpilogue* epilogue, const at::Tensor& residual, at::Tensor& y);

}  // namespace ge::cpu
