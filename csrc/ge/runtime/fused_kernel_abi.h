// The ABI between generated fused kernels and the device that runs them. The generated
// translation unit includes no engine or ATen header: it gets this struct's text
// (kFusedKernelAbiSource) pasted in, so both sides compile the same declaration.
#pragma once

#include <cstdint>

#define GE_FUSED_KERNEL_ABI                                                                                           \
  extern "C" {                                                                                                        \
  /* Runs body(begin, end, ctx) over [0, n) split into chunks of at least `grain` items, on */                        \
  /* the device's thread pool; returns when every chunk is done. */                                                   \
  struct GeKernelRuntime {                                                                                            \
    void (*parallel_for)(int64_t n, int64_t grain, void (*body)(int64_t, int64_t, void*), void* ctx);                 \
  };                                                                                                                  \
  /* A kernel: buffers = its inputs then its outputs, in the order of its FusedKernel node; */                        \
  /* sizes = the extents and strides a kernel generated for run-time sizes reads (its */                              \
  /* FusedKernelDef::sizes; unused by a kernel with literal sizes). */                                                \
  typedef void (*GeFusedKernelFn)(void* const* buffers, const int64_t* sizes, const struct GeKernelRuntime* runtime); \
  }

GE_FUSED_KERNEL_ABI

#define GE_ABI_STRINGIFY_(...) #__VA_ARGS__
#define GE_ABI_STRINGIFY(x) GE_ABI_STRINGIFY_(x)

namespace ge {
inline constexpr const char* kFusedKernelAbiSource = GE_ABI_STRINGIFY(GE_FUSED_KERNEL_ABI);
}  // namespace ge
