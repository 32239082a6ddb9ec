// C++ for fused kernels: one translation unit per graph, every shape and stride a literal, inner
// loops contiguous and free of calls where the math allows, rows parallel through the device's
// runtime ABI (fused_kernel_abi.h). The code includes only C/C++ standard headers.
#pragma once

#include <string>
#include <vector>

#include "ge/autofuse/kernel_ir.h"

namespace ge::autofuse {

std::string GenerateCpp(const std::vector<KernelIR>& kernels);

}  // namespace ge::autofuse
