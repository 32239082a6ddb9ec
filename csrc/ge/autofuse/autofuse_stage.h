// Stage "autofuse": groups fusible nodes (grouping.h), lowers each group to kernel IR, generates
// one C++ translation unit for the graph, compiles it into the kernel cache and, only when that
// succeeded, replaces every group with a FusedKernel node. When there is no compiler, it fails
// or times out, the graph keeps its library kernels and one warning says why: a model never
// fails because of fusion.
#pragma once

#include <memory>
#include <unordered_map>

#include "ge/autofuse/cpp_codegen.h"
#include "ge/autofuse/grouping.h"
#include "ge/autofuse/kernel_compiler.h"
#include "ge/base/options.h"
#include "ge/runtime/device.h"
#include "ge/runtime/fused_kernel_def.h"

namespace ge::autofuse {

struct AutofuseOptions {
  bool enabled = true;  // ge.autofuse, and AUTOFUSE_FLAGS="--enable_autofuse=false" as in GE
  GroupingOptions grouping;
  KernelCompilerOptions compiler;
  SizeMode sizes = SizeMode::kLiteral;       // ge.kernelRunTimeSizes: kRunTime
  KernelStyle style = KernelStyle::kVector;  // ge.kernelCodegen
  static Expected<AutofuseOptions> FromOptions(const Options& options);
};

struct AutofuseStats {
  int kernels = 0;            // FusedKernel nodes made
  int size_expr_kernels = 0;  // of those with run-time sizes, the ones whose sizes all have expressions
  int fused_nodes = 0;        // nodes they replaced
  int library_epilogues = 0;  // MatMulV2 + activation pairs made one FusedMatMul (library_epilogues.h)
  bool cache_hit = false;
  double build_ms = 0;  // compiler time (0 on a cache hit)
  std::string library;  // the loaded .so and its source in the cache
  std::string source;
  std::string fallback;  // why the graph kept its library kernels, when it did
};

// The stage's typed result: the library and the definition of every FusedKernel node it made.
struct AutofuseResult {
  std::shared_ptr<const KernelLibrary> library;  // null when nothing was fused
  FusedKernelDefs kernels;
};

// `device` says which library ops may run as a kernel's producer (KernelFactory::CanBeFusedProducer).
Expected<AutofuseResult> RunAutofuse(Graph& graph, const AutofuseOptions& options, const KernelFactory& device,
                                     AutofuseStats* stats);

}  // namespace ge::autofuse
