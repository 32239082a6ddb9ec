// MatMulV2 through oneDNN where that is faster than at::mm (see onednn_linear.cc).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <ATen/core/Tensor.h>

#include "devices/cpu/kernels/epilogue_activations.h"
#include "devices/onednn/matmul.h"

namespace ge::cpu {

// A launch body computing y = act(x1 · x2 (+ bias)) (x1 [m, k], x2 [k, n], y [m, n], any
// strides; bias [n] or undefined; act null or an epilogue activation, applied as oneDNN's
// post-op), or nullopt when oneDNN does not take these dtypes and layouts. A constant x2 is
// packed into oneDNN's layout here, once. Whether it beats at::mm is the caller's measurement.
std::optional<std::function<void()>> OneDnnLinear(const at::Tensor& x1, const at::Tensor& x2, const at::Tensor& bias,
                                                  bool x2_is_constant, const CpuEpilogue* activation,
                                                  const at::Tensor& y);

}  // namespace ge::cpu
