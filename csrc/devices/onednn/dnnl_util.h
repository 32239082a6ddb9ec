// Pieces the engine's oneDNN primitives share (conv2d.cc, matmul.cc). Internal to
// devices/onednn: the only place that includes the system's oneDNN headers.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include "devices/onednn/post_ops.h"

namespace ge::onednn {

// The process's CPU engine (oneDNN engines are thread-safe; streams are not: one per primitive).
const dnnl::engine& CpuEngine();

// Whether every size is at least 1: oneDNN is never asked to plan for an empty tensor.
template <typename Sizes>
bool AllPositive(const Sizes& sizes) {
  for (auto size : sizes)
    if (size < 1) return false;
  return true;
}

// Appends `activation` as an eltwise post-op (none: nothing).
void AppendActivation(dnnl::post_ops& post, Activation activation);

}  // namespace ge::onednn
