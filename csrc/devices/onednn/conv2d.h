// A 2-D convolution as one oneDNN primitive, made once for fixed shapes and run on the caller's
// buffers. ATen's oneDNN operators (mkldnn::_convolution_pointwise) allocate their output on
// every call, so a kernel using them copied it into the task's buffer; and its plain
// convolution reorders a weight into oneDNN's blocked layout on every call. Here the primitive
// writes straight into the output in whatever strides it has (NHWC in the engine), with a
// per-channel scale and shift (a batch norm), a
// residual add and an activation applied by oneDNN's post-ops while the output is in cache; the
// weight is packed into a buffer of the caller's, once or whenever the caller says it changed.
//
// This layer sees no torch: it is built against the system's oneDNN (Debian's libdnnl), while
// libtorch carries its own copy with hidden symbols, so the two never meet. Both use the one
// OpenMP runtime libtorch loads, with the calling thread's thread count.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "devices/onednn/post_ops.h"
#include "ge/base/status.h"

namespace ge::onednn {

using Dims4 = std::array<int64_t, 4>;
using Dims2 = std::array<int64_t, 2>;

// Sizes are in NCHW order (OIHW for the weight: [K, C / groups, KH, KW]); strides are in
// elements, in the same order, so a channels-last tensor is [N, C, H, W] with strides
// [H*W*C, 1, W*C, C]. All float32.
struct Conv2DSpec {
  Dims4 x_sizes{}, x_strides{};
  Dims4 w_sizes{};
  Dims4 y_sizes{}, y_strides{};
  Dims2 stride{1, 1}, padding{0, 0}, dilation{1, 1};
  int64_t groups = 1;
  bool bias = false;
  // y = y * scale[k] + shift[k] per output channel k (an inference batch norm), after the bias.
  bool channel_affine = false;
  bool residual = false;  // then y = y + r, r with y's sizes
  Dims4 residual_strides{};
  Activation activation = Activation::kNone;  // then y = act(y)
};

// The buffers of one run; those the spec does not have are not read.
struct Conv2DBuffers {
  const float* x = nullptr;
  const void* packed_weight = nullptr;  // PackWeight's
  const float* bias = nullptr;          // K floats
  const float* scale = nullptr;         // K floats (channel_affine)
  const float* shift = nullptr;         // K floats (channel_affine)
  const float* residual = nullptr;
  float* y = nullptr;
};

class Conv2D {
 public:
  // The primitive oneDNN picks for `spec` on this CPU; an error naming the shapes when it has none.
  static Expected<std::unique_ptr<Conv2D>> Create(const Conv2DSpec& spec);
  ~Conv2D();
  Conv2D(const Conv2D&) = delete;
  Conv2D& operator=(const Conv2D&) = delete;

  // The bytes of a weight in the primitive's (blocked) layout. The packed weight is the
  // caller's, so one primitive serves several weights (a task's and its timing stand-in's).
  size_t PackedWeightBytes() const;
  // Packs a weight of spec.w_sizes in `strides` into `packed` (PackedWeightBytes(), 64-byte aligned).
  Status PackWeight(const float* weight, const Dims4& strides, void* packed);
  // y = act((conv(x, packed) + bias?) * scale? + shift? + residual?). One caller at a time.
  Status Run(const Conv2DBuffers& buffers);
  // Which oneDNN implementation runs (e.g. "brgconv:avx512_core"): for logs and tests.
  const std::string& Implementation() const;

 private:
  struct Impl;
  explicit Conv2D(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ge::onednn
