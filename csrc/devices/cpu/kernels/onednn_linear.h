// MatMulV2 through oneDNN where that is faster than at::mm (see onednn_linear.cc).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <ATen/core/Tensor.h>

#include "devices/cpu/kernels/epilogue_activations.h"
#include "devices/onednn/matmul.h"

namespace ge::cpu {

// oneDNN's matmul for y = act(x1 · x2 (+ bias)) (x1 [m, k], x2 [k, n], y [m, n], any strides;
// bias [n] or undefined; act null or an epilogue activation, applied as oneDNN's post-op), made
// once at load with a constant x2 packed into its layout -- shared by a task's kernel and its
// timing stand-ins, which have the same sizes and strides. nullopt when oneDNN does not take
// these dtypes and layouts. Whether it beats at::mm is the caller's measurement.
struct OneDnnProduct {
  std::shared_ptr<onednn::MatMul> primitive;
  at::Tensor packed_weight;                 // undefined: x2 is read in place
  const CpuEpilogue* activation = nullptr;  // what the primitive's post-op leaves undone runs after it
};
std::optional<OneDnnProduct> PrepareOneDnnProduct(const at::Tensor& x1, const at::Tensor& x2, const at::Tensor& bias,
                                                  bool x2_is_constant, const CpuEpilogue* activation,
                                                  const at::Tensor& y);

// A launch body running `product` on these operands (the task's, or stand-ins of their shapes).
std::function<void()> OneDnnProductKernel(const OneDnnProduct& product, const at::Tensor& x1, const at::Tensor& x2,
                                          const at::Tensor& bias, const at::Tensor& y);

}  // namespace ge::cpu
