// y = act(x · w + bias) as one oneDNN matmul primitive, made once for fixed shapes and run on
// the caller's buffers. ATen's oneDNN linear operator (mkldnn::_linear_pointwise) looks its
// primitive up and allocates its output on every call (~12 us, then a copy into the task's
// buffer), which decided small products against it; this one writes straight into y. A weight
// that is a graph input is read in place in whatever strides it has (nn.Linear's [n, k] is
// x2 = w^T); a constant one may be packed once into oneDNN's own layout. See conv2d.h for how
// this layer meets torch (it does not).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "devices/onednn/post_ops.h"
#include "ge/base/status.h"

namespace ge::onednn {

using Dims2x = std::array<int64_t, 2>;

// x [m, k], w [k, n], y [m, n], strides in elements; bias [n]. All float32.
struct MatMulSpec {
  Dims2x x_sizes{}, x_strides{};
  Dims2x w_sizes{}, w_strides{};  // w_strides: of the weight as Run reads it when not packed
  Dims2x y_strides{};
  bool bias = false;
  bool packed_weight = false;  // Run reads a weight packed by PackWeight, in oneDNN's layout
  Activation activation = Activation::kNone;
};

class MatMul {
 public:
  static Expected<std::unique_ptr<MatMul>> Create(const MatMulSpec& spec);
  ~MatMul();
  MatMul(const MatMul&) = delete;
  MatMul& operator=(const MatMul&) = delete;

  // For a spec with packed_weight: the packed weight's bytes, and the packing of a weight in
  // `strides` into `packed` (64-byte aligned, the caller's).
  size_t PackedWeightBytes() const;
  Status PackWeight(const float* weight, const Dims2x& strides, void* packed);
  // y = act(x · w + bias?); w is the packed weight or the plain one, as the spec says. One caller at a time.
  Status Run(const float* x, const void* w, const float* bias, float* y);
  const std::string& Implementation() const;

 private:
  struct Impl;
  explicit MatMul(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ge::onednn
