// C++ for fused kernels: one translation unit per graph, inner loops contiguous and free of calls
// where the math allows, rows parallel through the device's runtime ABI (fused_kernel_abi.h).
// The code includes only C/C++ standard headers. Sizes (extents, strides, concat offsets) are
// literals, or with SizeMode::kRunTime entries of the `sizes` array the kernel is called with:
// then the text depends only on the kernels' structure, so the instances of a graph with
// symbolic sizes share one compiled library.
#pragma once

#include <string>
#include <vector>

#include "ge/autofuse/kernel_ir.h"

namespace ge::autofuse {

enum class SizeMode : uint8_t { kLiteral, kRunTime };

struct GeneratedKernels {
  std::string source;
  std::vector<std::vector<int64_t>> sizes;  // per kernel: its `sizes` argument (empty for literal sizes)
};

GeneratedKernels GenerateCpp(const std::vector<KernelIR>& kernels, SizeMode mode = SizeMode::kLiteral);

}  // namespace ge::autofuse
