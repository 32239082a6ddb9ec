// Max pooling of channels-last float32 activations without indices (inference: a ResNet stem's
// pool, whose argmax nobody reads). ATen's channels-last kernel always computes and writes an
// int64 index per output element -- three times the bytes of the output itself (resnet_b8's stem
// pool: 453 us alone, ~1.2 ms on average in a run). Each output pixel's channels are one
// contiguous run, the running maximum of the window's pixels, a vector of channels at a time
// (xsimd code per instruction set, picked at run time, as few_pixel_conv.h).
#pragma once

#include <cstdint>

namespace ge::cpu {

struct NhwcPoolShape {
  int64_t n, h, w, c;                    // x [n, h, w, c]
  int64_t oh, ow;                        // y [n, oh, ow, c]
  int64_t kernel[2], stride[2], pad[2];  // (dilation 1)
};

// y = the maximum over each window of x (dense NHWC), padding excluded; a NaN in a window gives
// NaN, as ATen's max pool. Split over the intra-op threads by output rows.
void MaxPoolNhwc(const NhwcPoolShape& s, const float* x, float* y);

// Output rows [begin, end) of n * oh: each body MaxPoolNhwc picks from (tests call each).
namespace max_pool_detail {
// max(acc, v) where a NaN in v wins, as in ATen (a NaN already in acc stays: v > NaN is false).
inline float MaxKeepingNan(float acc, float v) { return (v > acc || v != v) ? v : acc; }

void RowsPortable(const NhwcPoolShape& s, const float* x, float* y, int64_t begin, int64_t end);
void RowsAvx2(const NhwcPoolShape& s, const float* x, float* y, int64_t begin, int64_t end);    // AVX2 CPUs only
void RowsAvx512(const NhwcPoolShape& s, const float* x, float* y, int64_t begin, int64_t end);  // AVX-512F only
}  // namespace max_pool_detail

}  // namespace ge::cpu
