// The few-pixel convolution kernels (few_pixel_conv.h) against ATen's convolution: packing, im2col
// in either window order and each instruction set's body of both kernels, over strides, padding, dilation, batches, a
// block of output channels cut short and pixel counts that leave a partial pass, with and without each epilogue term.
#include "devices/cpu/kernels/few_pixel_conv.h"

#include <gtest/gtest.h>

#include <ATen/ops/conv2d.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>

#include <string>
#include <utility>
#include <vector>

namespace ge::cpu {
namespace {

struct Case {
  int64_t n, cin, h, w, cout, k, stride, pad, dilation;
  bool bias, affine, residual;
};

FewPixelGeometry GeometryOf(const Case& c) {
  FewPixelGeometry g;
  g.n = c.n;
  g.h = c.h;
  g.w = c.w;
  g.cin = c.cin;
  g.cout = c.cout;
  g.kh = g.kw = c.k;
  g.oh = (c.h + 2 * c.pad - c.dilation * (c.k - 1) - 1) / c.stride + 1;
  g.ow = (c.w + 2 * c.pad - c.dilation * (c.k - 1) - 1) / c.stride + 1;
  for (int d = 0; d < 2; ++d) {
    g.stride[d] = c.stride;
    g.pad[d] = c.pad;
    g.dilation[d] = c.dilation;
  }
  return g;
}

using Body = void (*)(const FewPixelArgs&, int64_t, int64_t);

// Each instruction set's body this CPU runs, of the packed kernel or of the unpacked one.
std::vector<std::pair<std::string, Body>> Bodies(bool packed) {
  namespace d = few_pixel_detail;
  std::vector<std::pair<std::string, Body>> bodies{{"portable", packed ? d::BlocksPortable : d::RowsPortable},
                                                   {"dispatched", packed ? FewPixelBlocks : FewPixelRows}};
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    bodies.emplace_back("avx2", packed ? d::BlocksAvx2 : d::RowsAvx2);
  if (__builtin_cpu_supports("avx512f")) bodies.emplace_back("avx512", packed ? d::BlocksAvx512 : d::RowsAvx512);
  return bodies;
}

// The product of `cols` with the packed weight or the rows of one as stored, by every body, split
// into two calls as two work items would split it; y NCHW.
std::vector<std::pair<std::string, at::Tensor>> EveryBody(const FewPixelGeometry& g, FewPixelArgs args, bool packed) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  const int64_t items = packed ? g.blocks() : g.cout;
  for (const auto& [name, body] : Bodies(packed)) {
    at::Tensor y = at::zeros({g.n, g.oh, g.ow, g.cout});
    args.y = y.data_ptr<float>();
    body(args, 0, items / 2);
    body(args, items / 2, items);
    out.emplace_back((packed ? "packed " : "unpacked ") + name, y.permute({0, 3, 1, 2}));
  }
  return out;
}

void ExpectMatchesAten(const Case& c) {
  const FewPixelGeometry g = GeometryOf(c);
  at::Tensor x = at::randn({c.n, c.cin, c.h, c.w});
  at::Tensor weight = at::randn({c.cout, c.cin, c.k, c.k});
  at::Tensor bias = at::randn({c.cout}), scale = at::randn({c.cout}), shift = at::randn({c.cout});
  at::Tensor residual = at::randn({c.n, c.cout, g.oh, g.ow});
  at::Tensor expected = at::conv2d(x, weight, c.bias ? bias : at::Tensor(), {c.stride, c.stride}, {c.pad, c.pad},
                                   {c.dilation, c.dilation});
  if (c.affine) expected = expected.mul(scale.view({1, -1, 1, 1})).add(shift.view({1, -1, 1, 1}));
  if (c.residual) expected = expected.add(residual);

  // The weight channels-last (any strides pack), x, y and the residual NHWC.
  const at::Tensor w_cl = weight.contiguous(at::MemoryFormat::ChannelsLast);
  const int64_t strides[4] = {w_cl.stride(0), w_cl.stride(1), w_cl.stride(2), w_cl.stride(3)};
  at::Tensor packed = at::empty({g.packed_floats()});
  PackFewPixelWeight(g, w_cl.const_data_ptr<float>(), strides, packed.data_ptr<float>());
  const at::Tensor x_nhwc = x.permute({0, 2, 3, 1}).contiguous();
  const at::Tensor residual_nhwc = residual.permute({0, 2, 3, 1}).contiguous();
  FewPixelArgs args;
  args.geometry = &g;
  if (c.bias) args.bias = bias.const_data_ptr<float>();
  if (c.affine) {
    args.scale = scale.const_data_ptr<float>();
    args.shift = shift.const_data_ptr<float>();
  }
  if (c.residual) args.residual = residual_nhwc.const_data_ptr<float>();
  // The im2col rows in `order`, made in two calls.
  auto im2col = [&](const WindowOrder& order) {
    at::Tensor cols = at::empty({g.im2col_floats()});
    FewPixelIm2col(g, order, x_nhwc.const_data_ptr<float>(), cols.data_ptr<float>(), 0, g.pixels() / 2);
    FewPixelIm2col(g, order, x_nhwc.const_data_ptr<float>(), cols.data_ptr<float>(), g.pixels() / 2, g.pixels());
    return cols;
  };
  std::vector<std::pair<std::string, at::Tensor>> got;
  const at::Tensor packed_cols = im2col(PackedWindowOrder(g));
  args.cols = packed_cols.const_data_ptr<float>();
  args.packed = packed.const_data_ptr<float>();
  for (auto& y : EveryBody(g, args, true)) got.push_back(std::move(y));
  // Unpacked: the weight as a model stores it (OIHW: cin outermost in a row) and channels-last.
  for (const at::Tensor& stored : {weight, w_cl}) {
    const WindowOrder order{stored.stride(1), stored.stride(2), stored.stride(3)};
    const at::Tensor cols = im2col(order);
    args.cols = cols.const_data_ptr<float>();
    args.packed = nullptr;
    args.rows = stored.const_data_ptr<float>();
    for (auto& [name, y] : EveryBody(g, args, false))
      got.emplace_back(name + (stored.is_contiguous() ? " oihw" : " ohwi"), y);
  }
  for (const auto& [name, y] : got)
    EXPECT_TRUE(y.allclose(expected, 1e-4, 1e-4))
        << name << ": max abs err " << y.sub(expected).abs().max().item<float>();
}

TEST(FewPixelConvTest, ResNetsLastStageShapeWithEveryEpilogueTerm) {
  // 16 pixels (one AVX-512 pass, 6 + 6 + 4 on AVX2), 40 channels: the last block of 16 cut at 8
  ExpectMatchesAten({1, 32, 4, 4, 40, 3, 1, 1, 1, true, true, true});
}

TEST(FewPixelConvTest, StridesDilationAndBatchesLeavePartialPasses) {
  ExpectMatchesAten({2, 24, 9, 7, 16, 3, 2, 2, 2, true, false, false});  // 2 x 5 x 4 = 40 pixels
  ExpectMatchesAten({3, 8, 5, 5, 33, 3, 1, 0, 1, false, true, false});   // 27 pixels, a 1-channel block
  ExpectMatchesAten({1, 20, 7, 7, 24, 1, 2, 0, 1, false, false, true});  // 1x1 stride 2: 16 pixels
  ExpectMatchesAten({1, 16, 8, 8, 16, 1, 1, 0, 1, true, false, false});  // 64 pixels: kFewPixelsMax
  ExpectMatchesAten({1, 4, 3, 3, 5, 5, 1, 2, 1, true, true, true});      // a window wider than the input
}

TEST(FewPixelConvTest, TheIm2colRowsDoNotShareL1Sets) {
  // a 3x3 window over 512 channels: rows 4608 floats long, 18 KiB -- a multiple of 2 KiB
  FewPixelGeometry g = GeometryOf({1, 512, 4, 4, 512, 3, 1, 1, 1, false, false, false});
  EXPECT_GE(g.im2col_stride(), g.depth());
  EXPECT_NE((g.im2col_stride() * 4) % 4096, 0);
  EXPECT_NE((g.im2col_stride() * 4) % 2048, 0);
  EXPECT_EQ(g.im2col_stride() % 16, 0);  // every row starts on a cache line
}

}  // namespace
}  // namespace ge::cpu
