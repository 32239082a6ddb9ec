// What the engine's oneDNN primitives (conv2d.h, matmul.h) apply to their output before
// writing it: an activation as a post-op.
#pragma once

#include <string>

namespace ge::onednn {

// The activations applied as a post-op (silu: x * sigmoid(x)). kRelu is oneDNN's, which turns
// NaN into 0 where torch's ReLU keeps it: the CPU device never asks for it (it applies ReLU
// after the primitive, epilogue_activations.cc).
enum class Activation { kNone, kRelu, kGeluErf, kGeluTanh, kSigmoid, kTanh, kSilu };

// The oneDNN the primitives were built with, e.g. "2.6.3".
std::string Version();

}  // namespace ge::onednn
