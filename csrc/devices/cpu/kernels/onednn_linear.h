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

// y = act(x1 · x2 + bias) computed transposed, yᵀ = w · x1ᵀ with the weight w = x2ᵀ as oneDNN's
// left operand, then transposed back into y with the bias added (transpose_rows.h); the
// activation is oneDNN's post-op where there is no bias, else applied in place after. oneDNN's
// matmul reads its left operand in place and packs its right one, here the few rows of x1, where
// the plain form packs the whole weight on every call. Timed as the kernel choice times it
// (weights evicted) on an Intel Xeon with AVX-512: 64 x 1408 x 512 in 326 against 394 us for
// the plain form, 64 x 512 x 512 123 against 143, 64 x 1024 x 1024 with bias and ReLU 496
// against 567 (MKL in column blocks); the transpose back costs 5-10% of it, and from 256 rows on
// the plain form won (512 rows: 10-30% faster).
// Made where x2 is the transpose of a dense [n, k] weight (nn.Linear's) read in place, x1 and y
// have unit column strides and x1 has at most kTransposedProductMaxRows rows; nullopt where
// oneDNN would run it with its reference kernel.
inline constexpr int64_t kTransposedProductMaxRows = 256;
struct OneDnnTransposedProduct {
  std::shared_ptr<onednn::MatMul> primitive;  // [n, k] · [k, m] -> [n, m], no bias
  bool activation_post_op = false;            // made with the activation's post-op
};
std::optional<OneDnnTransposedProduct> PrepareOneDnnTransposedProduct(const at::Tensor& x1, const at::Tensor& x2,
                                                                      const at::Tensor& bias,
                                                                      const CpuEpilogue* activation,
                                                                      const at::Tensor& y);
// A launch body for it on these operands (yᵀ in a buffer of the running thread's, grown once).
// `activation`: the one the product was prepared with.
std::function<void()> OneDnnTransposedProductKernel(const OneDnnTransposedProduct& product, const at::Tensor& x1,
                                                    const at::Tensor& x2, const at::Tensor& bias,
                                                    const CpuEpilogue* activation, const at::Tensor& y);

}  // namespace ge::cpu
