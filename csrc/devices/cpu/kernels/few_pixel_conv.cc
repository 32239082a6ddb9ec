#include "devices/cpu/kernels/few_pixel_conv.h"

#include <algorithm>
#include <cstring>

#include "devices/cpu/kernels/isa_dispatch.h"

namespace ge::cpu {
namespace few_pixel_detail {

namespace {

// The product for output channels [c_begin, c_end) one sum at a time; weight(c, k) reads w[c, k]
// wherever the kernel keeps it.
template <class Weight>
void PortableProduct(const FewPixelArgs& a, int64_t c_begin, int64_t c_end, const Weight& weight) {
  const FewPixelGeometry& g = *a.geometry;
  for (int64_t c = c_begin; c < c_end; ++c)
    for (int64_t p = 0; p < g.pixels(); ++p) {
      float s = 0.f;
      for (int64_t k = 0; k < g.depth(); ++k) s += a.cols[p * g.im2col_stride() + k] * weight(c, k);
      a.y[p * g.cout + c] = Output(a, c, p * g.cout + c, s);
    }
}

}  // namespace

void BlocksPortable(const FewPixelArgs& a, int64_t begin, int64_t end) {
  const int64_t k_depth = a.geometry->depth();
  PortableProduct(
      a, begin * kFewPixelChannels, std::min(a.geometry->cout, end * kFewPixelChannels), [&](int64_t c, int64_t k) {
        return a.packed[((c / kFewPixelChannels) * k_depth + k) * kFewPixelChannels + c % kFewPixelChannels];
      });
}

void RowsPortable(const FewPixelArgs& a, int64_t begin, int64_t end) {
  const int64_t k_depth = a.geometry->depth();
  PortableProduct(a, begin, end, [&](int64_t c, int64_t k) { return a.rows[c * k_depth + k]; });
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
        float* out = row + i * order.i_step + j * order.j_step;
        if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) {  // padding
          if (runs)
            std::memset(out, 0, run);
          else
            for (int64_t ci = 0; ci < g.cin; ++ci) out[ci * order.ci_step] = 0.f;
          continue;
        }
        const float* in = x + ((b * g.h + iy) * g.w + ix) * g.cin;
        if (runs)
          std::memcpy(out, in, run);
        else
          for (int64_t ci = 0; ci < g.cin; ++ci) out[ci * order.ci_step] = in[ci];
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
