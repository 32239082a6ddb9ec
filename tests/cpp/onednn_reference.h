// What the engine's oneDNN primitives' post-op activations compute, by their definitions, in
// double: the reference of onednn_conv2d_test and onednn_matmul_test.
#pragma once

#include <algorithm>
#include <cmath>

#include "devices/onednn/post_ops.h"

namespace ge::onednn {

inline double ReferenceActivation(Activation a, double v) {
  switch (a) {
    case Activation::kRelu: return std::max(v, 0.0);
    case Activation::kGeluErf: return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    case Activation::kGeluTanh: return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    case Activation::kSigmoid: return 1 / (1 + std::exp(-v));
    case Activation::kTanh: return std::tanh(v);
    case Activation::kSilu: return v / (1 + std::exp(-v));
    case Activation::kNone: break;
  }
  return v;
}

}  // namespace ge::onednn
