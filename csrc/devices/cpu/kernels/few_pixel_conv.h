// Convolutions with few output pixels (a batch-1 ResNet's last stage: 512 channels at 4x4, 16
// pixels against a 9.4 MB weight) as a product that reads the weight once, front to back. Such a
// convolution is an [P, K] x [K, Cout] product with P tiny (P = N * OH * OW, K = KH * KW * Cin):
// there is no reuse of the weight for a blocked GEMM to exploit, so its time is the weight's trip
// from memory, and oneDNN's direct convolution ran at ~half of that bound on a Zen 4 (700-800 us
// against ~350 us for 75 MFLOP and 9.4 MB), MKL's and oneDNN's products on an im2col slower still
// (1.2-1.8 ms with a cold weight). Candidates of the measured choice (channels_last_conv.h).
//
// Two kernels, one per place the weight lives. Both take an im2col of the P pixels ([P][K], zeros
// for the padding) made per call, which stays in L2.
//   Packed (FewPixelBlocks): the weight is packed once (or again when it changed:
//   repack_on_change.h) into blocks of 16 output channels, [Cout / 16][K][16], so that one block is
//   one sequential stream. The pixels' im2col values are broadcast against the block's weight
//   vectors, one accumulator per pixel and vector of channels.
//   Unpacked (FewPixelRows): the weight as the model stores it -- each output channel's K values
//   one dense row, in the weight's own order of (cin, kh, kw), which the im2col follows. A few
//   rows at a time are dotted with a few pixels' rows, vectors along K, one accumulator per row
//   and pixel. A weight that is a graph input is read once per call, where the packed kernel
//   reads it to digest it and then reads its packing (twice the traffic for the same product).
#pragma once

#include <cstdint>

namespace ge::cpu {

// The most output pixels the kernel is offered for: past a few vectors of pixels the weight is
// reused enough for oneDNN's blocked kernels.
inline constexpr int64_t kFewPixelsMax = 64;
// Output channels per packed block (one AVX-512 vector, two AVX2 vectors).
inline constexpr int64_t kFewPixelChannels = 16;

// An NHWC convolution's geometry (groups 1).
struct FewPixelGeometry {
  int64_t n, h, w, cin;  // x [n, h, w, cin]
  int64_t cout, kh, kw;  // weight [cout, cin, kh, kw]
  int64_t oh, ow;        // y [n, oh, ow, cout]
  int64_t stride[2], pad[2], dilation[2];

  int64_t pixels() const { return n * oh * ow; }
  int64_t depth() const { return kh * kw * cin; }  // K: one im2col row
  int64_t blocks() const { return (cout + kFewPixelChannels - 1) / kFewPixelChannels; }
  int64_t packed_floats() const { return blocks() * depth() * kFewPixelChannels; }
  // The im2col's row stride: K rounded up to a cache line, plus one line, so that the rows a
  // step reads side by side do not share the L1's sets (rows 4608 floats apart -- a 3x3x512
  // window -- fell into two sets and missed L1 on every step).
  int64_t im2col_stride() const { return (depth() + 15) / 16 * 16 + 16; }
  int64_t im2col_floats() const { return pixels() * im2col_stride(); }
};

// Where element (ci, i, j) of a window goes in an im2col row: at ci * ci_step + i * i_step +
// j * j_step.
struct WindowOrder {
  int64_t ci_step, i_step, j_step;
};

// The packed kernel's order: (kh, kw, cin), cin innermost.
inline WindowOrder PackedWindowOrder(const FewPixelGeometry& g) { return {1, g.kw * g.cin, g.cin}; }

// weight [cout, cin, kh, kw] with element strides `strides` -> packed [blocks][K][16], K ordered
// (kh, kw, cin) as the im2col rows; the channels past cout are zeros.
void PackFewPixelWeight(const FewPixelGeometry& g, const float* weight, const int64_t strides[4], float* packed);

// x (NHWC, dense) -> rows [begin, end) of cols [P][K] in `order`, row stride im2col_stride() (zeros
// where the window reads padding).
void FewPixelIm2col(const FewPixelGeometry& g, const WindowOrder& order, const float* x, float* cols, int64_t begin,
                    int64_t end);

// What a kernel reads and writes: y[p, c] = (sum_k cols[p, k] * w[c, k] + bias[c]) * scale[c] +
// shift[c] + residual[p, c] for each output pixel p (y and residual NHWC, dense; bias, scale +
// shift and residual may be null). w is `packed` (FewPixelBlocks) or `rows` (FewPixelRows).
struct FewPixelArgs {
  const FewPixelGeometry* geometry = nullptr;
  const float* cols = nullptr;
  const float* packed = nullptr;
  const float* rows = nullptr;  // [cout][K]: row c at rows + c * K, in the im2col's order
  const float* bias = nullptr;
  const float* scale = nullptr;
  const float* shift = nullptr;
  const float* residual = nullptr;
  float* y = nullptr;
};

// The packed kernel for the blocks of kFewPixelChannels output channels [begin, end), and the
// unpacked one for the output channels [begin, end). xsimd code for AVX-512 or AVX2 + FMA when the
// CPU has them (compiled per instruction set, picked at run time), a portable loop elsewhere.
void FewPixelBlocks(const FewPixelArgs& a, int64_t begin, int64_t end);
void FewPixelRows(const FewPixelArgs& a, int64_t begin, int64_t end);

namespace few_pixel_detail {  // each body FewPixelBlocks picks from (tests call each)
// y[at] for output channel c from the product's sum: the epilogue every scalar store applies.
inline float Output(const FewPixelArgs& a, int64_t c, int64_t at, float sum) {
  const float biased = sum + (a.bias ? a.bias[c] : 0.f);
  return biased * (a.scale ? a.scale[c] : 1.f) + (a.shift ? a.shift[c] : 0.f) + (a.residual ? a.residual[at] : 0.f);
}

void BlocksPortable(const FewPixelArgs& a, int64_t begin, int64_t end);
void BlocksAvx2(const FewPixelArgs& a, int64_t begin, int64_t end);    // CPUs with AVX2 and FMA only
void BlocksAvx512(const FewPixelArgs& a, int64_t begin, int64_t end);  // CPUs with AVX-512F only
void RowsPortable(const FewPixelArgs& a, int64_t begin, int64_t end);
void RowsAvx2(const FewPixelArgs& a, int64_t begin, int64_t end);
void RowsAvx512(const FewPixelArgs& a, int64_t begin, int64_t end);
}  // namespace few_pixel_detail

}  // namespace ge::cpu
