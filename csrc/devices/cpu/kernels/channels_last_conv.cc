#include "devices/cpu/kernels/channels_last_conv.h"

#include <ATen/Parallel.h>
#include <ATen/ops/convolution.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ge::cpu {
namespace {

void Convolve(at::Tensor& y, const at::Tensor& x, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
              const ConvWindow& c) {
  at::convolution_out(y, x, weight, bias, c.stride, c.padding, c.dilation, /*transposed=*/false,
                      /*output_padding=*/{0, 0}, c.groups);
}

}  // namespace

std::vector<KernelCandidate> ChannelsLastConvCandidates(const ChannelsLastConv& conv) {
  std::vector<KernelCandidate> out{{"nhwc", [c = conv]() mutable { Convolve(c.y, c.x, c.weight, c.bias, c.window); }}};
  if (conv.x_nchw.defined() && conv.y_nchw.defined())
    out.push_back({"nchw", [c = conv]() mutable {
                     c.x_nchw.copy_(c.x);
                     Convolve(c.y_nchw, c.x_nchw, c.weight, c.bias, c.window);
                     c.y.copy_(c.y_nchw);
                   }});
  return out;
}

std::string ChannelsLastConvKey(const ChannelsLastConv& conv, bool constant_weight) {
  return fmt::format("Conv2D NHWC {} x{} w{} stride{} pad{} dilation{} groups={}{}{} threads={}",
                     c10::toString(conv.x.scalar_type()), conv.x.sizes(), conv.weight.sizes(), conv.window.stride,
                     conv.window.padding, conv.window.dilation, conv.window.groups, conv.bias ? " +bias" : "",
                     constant_weight ? " const-weight" : "", at::get_num_threads());
}

}  // namespace ge::cpu
