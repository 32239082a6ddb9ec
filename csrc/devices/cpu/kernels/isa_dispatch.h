// Kernels compiled once per instruction set (gemv_avx512.cc, few_pixel_conv_avx2.cc, ...; the rest
// of the library is built for any x86-64) and picked at run time for the CPU at hand.
#pragma once

namespace ge::cpu {

// `avx512` on a CPU with AVX-512F, else `avx2` on one with AVX2 and FMA, else `portable`.
template <class Fn>
Fn ForThisCpu(Fn avx512, Fn avx2, Fn portable) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return avx2;
  return portable;
}

}  // namespace ge::cpu
