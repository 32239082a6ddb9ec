#include "devices/cpu/kernels/few_pixel_conv.h"

#include <algorithm>
#include <cstring>

#include "devices/cpu/kernels/isa_dispatch.h"

namespace ge::cpu {
namespace few_pixel_detail {

void BlocksPortable(const FewPixelArgs& a, int64_t begin, int64_t end) {
  const FewPixelGeometry& g = *a.geometry;
  const int64_t k_depth = g.depth();
  for (int64_t block = begin; block < end; ++block)
    for (int64_t p = 0; p < g.pixels(); ++p)
      for (int64_t j = 0; j < kFewPixelChannels && block * kFewPixelChannels + j < g.cout; ++j) {
        const int64_t c = block * kFewPixelChannels + j;
        float s = 0.f;
        for (int64_t k = 0; k < k_depth; ++k)
          s += a.cols[p * g.im2col_stride() + k] * a.packed[(block * k_depth + k) * kFewPixelChannels + j];
        s = (s + (a.bias ? a.bias[c] : 0.f)) * (a.scale ? a.scale[c] : 1.f) + (a.shift ? a.shift[c] : 0.f);
        a.y[p * g.cout + c] = s + (a.residual ? a.residual[p * g.cout + c] : 0.f);
      }
}

void RowsPortable(const FewPixelArgs& a, int64_t begin, int64_t end) {
  const FewPixelGeometry& g = *a.geometry;
  const int64_t k_depth = g.depth();
  for (int64_t c = begin; c < end; ++c)
    for (int64_t p = 0; p < g.pixels(); ++p) {
      float s = 0.f;
      for (int64_t k = 0; k < k_depth; ++k) s += a.cols[p * g.im2col_stride() + k] * a.rows[c * k_depth + k];
      s = (s + (a.bias ? a.bias[c] : 0.f)) * (a.scale ? a.scale[c] : 1.f) + (a.shift ? a.shift[c] : 0.f);
      a.y[p * g.cout + c] = s + (a.residual ? a.residual[p * g.cout + c] : 0.f);
    }
}

}  // namespace few_pixel_detail

void PackFewPixelWeight(const FewPixelGeometry& g, const float* weight, const int64_t strides[4], float* packed) {
  const int64_t k_depth = g.depth();
  std::memset(packed, 0, static_cast<size_t>(g.packed_floats()) * sizeof(float));
  for (int64_t c = 0; c < g.cout; ++c) {
    float* block = packed + (c / kFewPixelChannels) * k_depth * kFewPixelChannels + c % kFewPixelChannels;
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j)
        for (int64_t ci = 0; ci < g.cin; ++ci) {
          const int64_t k = (i * g.kw + j) * g.cin + ci;
          block[k * kFewPixelChannels] = weight[c * strides[0] + ci * strides[1] + i * strides[2] + j * strides[3]];
        }
  }
}

void FewPixelIm2col(const FewPixelGeometry& g, const WindowOrder& order, const float* x, float* cols, int64_t begin,
                    int64_t end) {
  const bool runs = order.ci_step == 1;  // a pixel's channels land side by side: one copy each
  const size_t run = static_cast<size_t>(g.cin) * sizeof(float);
  for (int64_t p = begin; p < end; ++p) {
    const int64_t b = p / (g.oh * g.ow), oy = p / g.ow % g.oh, ox = p % g.ow;
    float* row = cols + p * g.im2col_stride();
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t iy = oy * g.stride[0] - g.pad[0] + i * g.dilation[0];
        const int64_t ix = ox * g.stride[1] - g.pad[1] + j * g.dilation[1];
        const bool padding = iy < 0 || iy >= g.h || ix < 0 || ix >= g.w;
        const float* in = x + ((b * g.h + iy) * g.w + ix) * g.cin;
        float* out = row + i * order.i_step + j * order.j_step;
        if (runs && padding)
          std::memset(out, 0, run);
        else if (runs)
          std::memcpy(out, in, run);
        else
          for (int64_t ci = 0; ci < g.cin; ++ci) out[ci * order.ci_step] = padding ? 0.f : in[ci];
      }
  }
}

void FewPixelBlocks(const FewPixelArgs& a, int64_t begin, int64_t end) {
  static const auto blocks =
      ForThisCpu(&few_pixel_detail::BlocksAvx512, &few_pixel_detail::BlocksAvx2, &few_pixel_detail::BlocksPortable);
  blocks(a, begin, end);
}

void FewPixelRows(const FewPixelArgs& a, int64_t begin, int64_t end) {
  static const auto rows =
      ForThisCpu(&few_pixel_detail::RowsAvx512, &few_pixel_detail::RowsAvx2, &few_pixel_detail::RowsPortable);
  rows(a, begin, end);
}

}  // namespace ge::cpu
