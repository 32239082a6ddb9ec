// C++ for fused kernels: one library per graph, inner loops contiguous and free of calls
// where the math allows, rows parallel through the device's runtime ABI (fused_kernel_abi.h).
// The code includes only C/C++ standard headers. Sizes (extents, strides, concat offsets) are
// literals, or with SizeMode::kRunTime entries of the `sizes` array the kernel is called with:
// then the text depends only on the kernels' structure, so the instances of a graph with
// symbolic sizes share one compiled library.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ge/autofuse/kernel_ir.h"

namespace ge::autofuse {

enum class SizeMode : uint8_t { kLiteral, kRunTime };

// kVector: element loops and reductions run one xsimd vector (per unrolled copy) through every
// op of the chain, in registers (cpp_vector.h); kernels with element-level int64 values or
// concats keep block loops. kBlocks: every kernel runs blocks of elements op by op over
// stack arrays, which the compiler vectorizes op by op (no library needed).
enum class KernelStyle : uint8_t { kVector, kBlocks };

struct GeneratedKernels {
  // The headers and helpers every kernel uses (the same text for every graph of a style, so the
  // compiler can keep it precompiled), then the kernels.
  std::string prelude;
  std::vector<std::string> kernels;         // each kernel's text, complete given the prelude
  std::vector<std::vector<int64_t>> sizes;  // per kernel: its `sizes` argument (empty for literal sizes)
  // Per kernel, per entry of `sizes`: the entry over the graph's size symbols, where the
  // buffers' symbolic shapes give it (fixed_sizes.h), so it can be computed at other sizes.
  std::vector<std::vector<std::optional<SymExpr>>> size_exprs;
};

GeneratedKernels GenerateCpp(const std::vector<KernelIR>& kernels, SizeMode mode = SizeMode::kLiteral,
                             KernelStyle style = KernelStyle::kVector);

}  // namespace ge::autofuse
