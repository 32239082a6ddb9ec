// Convolution, pooling, normalization and softmax kernels.
#include <ATen/ops/_scaled_dot_product_flash_attention_for_cpu.h>
#include <ATen/ops/_softmax.h>
#include <ATen/ops/adaptive_avg_pool2d.h>
#include <ATen/ops/avg_pool2d.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/max_pool2d_with_indices.h>
#include <ATen/ops/native_batch_norm.h>
#include <ATen/ops/native_layer_norm.h>
#include <ATen/ops/pow.h>

#include "devices/cpu/kernel_registry.h"
#include "devices/cpu/kernels/filter_gradient.h"

namespace ge::cpu {
namespace {

using IntList = std::vector<int64_t>;

// ATen takes one padding per spatial dim; the IR's [top, bottom, left, right] must be symmetric.
Expected<IntList> SymmetricPadding(const KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(IntList pads, a.Attr<IntList>("pads"));
  if (pads[0] != pads[1] || pads[2] != pads[3])
    return Unimplemented("{} '{}': asymmetric pads {} are not supported on CPU", a.task.type, a.task.name,
                         ShapeToString(pads));
  return IntList{pads[0], pads[2]};
}

// The convolution ops' window attributes as ATen takes them (ConvWindow, filter_gradient.h).
Expected<ConvWindow> ReadConvWindow(const KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(IntList strides, a.Attr<IntList>("strides"));
  GE_ASSIGN_OR_RETURN(IntList dilations, a.Attr<IntList>("dilations"));
  ConvWindow w;
  GE_ASSIGN_OR_RETURN(w.groups, a.Attr<int64_t>("groups"));
  GE_ASSIGN_OR_RETURN(w.padding, SymmetricPadding(a));
  w.stride = {strides[2], strides[3]};
  w.dilation = {dilations[2], dilations[3]};
  return w;
}

Expected<std::unique_ptr<Kernel>> CreateConv2D(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(ConvWindow c, ReadConvWindow(a));
  if (a.inputs.size() > 3 && a.inputs[3].defined())
    return Unimplemented("Conv2D '{}': offset_w (int8) is not supported on CPU", a.task.name);
  std::optional<at::Tensor> bias;
  if (a.inputs[2].defined()) bias = a.inputs[2];
  return MakeKernel(a.task, [=, x = a.inputs[0], w = a.inputs[1], y = a.outputs[0]]() mutable {
    at::convolution_out(y, x, w, bias, c.stride, c.padding, c.dilation, /*transposed=*/false,
                        /*output_padding=*/{0, 0}, c.groups);
  });
}

// The weight gradient by oneDNN's backward-weights kernel or an im2col GEMM, whichever measured
// faster for these shapes on this CPU (timed on scratch tensors: the arena is not bound yet).
Expected<std::unique_ptr<Kernel>> CreateConv2DBackpropFilter(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(ConvWindow c, ReadConvWindow(a));
  const at::Tensor &x = a.inputs[0], &dy = a.inputs[1], &y = a.outputs[0];
  auto timed = [&]() {
    return FilterGradientCandidates(at::full_like(x, 0.5), at::full_like(dy, 0.5), c, at::empty_like(y));
  };
  return MakeKernel(a.task,
                    FastestByMeasurement(FilterGradientKey(x, dy, c, y), FilterGradientCandidates(x, dy, c, y), timed));
}

Expected<std::unique_ptr<Kernel>> CreateConv2DTranspose(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(ConvWindow c, ReadConvWindow(a));
  GE_ASSIGN_OR_RETURN(IntList output_padding, a.Attr<IntList>("output_padding"));
  IntList out_pad = {output_padding[2], output_padding[3]};
  std::optional<at::Tensor> bias;
  if (a.inputs[2].defined()) bias = a.inputs[2];
  return MakeKernel(a.task, [=, x = a.inputs[0], w = a.inputs[1], y = a.outputs[0]]() mutable {
    at::convolution_out(y, x, w, bias, c.stride, c.padding, c.dilation, /*transposed=*/true, out_pad, c.groups);
  });
}

struct PoolWindow {
  IntList kernel, stride, padding;
  bool ceil_mode;
};

Expected<PoolWindow> ReadPoolWindow(const KernelArgs& a) {
  PoolWindow w;
  GE_ASSIGN_OR_RETURN(bool global, a.Attr<bool>("global_pooling"));
  GE_ASSIGN_OR_RETURN(w.ceil_mode, a.Attr<bool>("ceil_mode"));
  if (global) {
    w.kernel = {a.inputs[0].size(2), a.inputs[0].size(3)};
    w.stride = w.kernel;
    w.padding = {0, 0};
    return w;
  }
  GE_ASSIGN_OR_RETURN(IntList ksize, a.Attr<IntList>("ksize"));
  GE_ASSIGN_OR_RETURN(IntList strides, a.Attr<IntList>("strides"));
  GE_ASSIGN_OR_RETURN(w.padding, SymmetricPadding(a));
  w.kernel = {ksize[2], ksize[3]};
  w.stride = {strides[2], strides[3]};
  return w;
}

// A contiguous workspace of NCHW's size seen as an NCHW tensor stored channels-last (NHWC bytes).
at::Tensor AsChannelsLast(const at::Tensor& workspace) {
  const auto n = workspace.size(0), c = workspace.size(1), h = workspace.size(2), w = workspace.size(3);
  return workspace.view({n, h, w, c}).permute({0, 3, 1, 2});
}

// Max pooling runs on a channels-last copy: ATen's NCHW max-pool kernel walks each plane with the
// window's stride and does not vectorize, while the channels-last one vectorizes over channels --
// 4x faster with both layout copies included (8x64x112x112, 3x3/2: 18.2 -> 4.5 ms), bit-identical.
// The copies and ATen's argmax indices (nobody reads them) are workspaces.
Expected<std::unique_ptr<Kernel>> CreateMaxPoolV3(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(PoolWindow w, ReadPoolWindow(a));
  GE_CHECK(a.workspaces.size() == 3, "MaxPoolV3 '{}': expected 3 workspaces", a.task.name);
  at::Tensor x_cl = AsChannelsLast(a.workspaces[0]), y_cl = AsChannelsLast(a.workspaces[1]);
  at::Tensor indices = AsChannelsLast(a.workspaces[2]);
  return MakeKernel(a.task, [w, x_cl, y_cl, indices, x = a.inputs[0], y = a.outputs[0]]() mutable {
    x_cl.copy_(x);
    at::max_pool2d_with_indices_out(y_cl, indices, x_cl, w.kernel, w.stride, w.padding, /*dilation=*/{1, 1},
                                    w.ceil_mode);
    y.copy_(y_cl);
  });
}

// MaxPoolV3's channels-last path with the argmax as an output: the indices ATen computes in
// channels-last are plane indices too (h * W + w), so only their layout is copied back.
Expected<std::unique_ptr<Kernel>> CreateMaxPoolWithArgmax(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(PoolWindow w, ReadPoolWindow(a));
  GE_CHECK(a.workspaces.size() == 3, "MaxPoolWithArgmaxV2 '{}': expected 3 workspaces", a.task.name);
  at::Tensor x_cl = AsChannelsLast(a.workspaces[0]), y_cl = AsChannelsLast(a.workspaces[1]);
  at::Tensor indices_cl = AsChannelsLast(a.workspaces[2]);
  return MakeKernel(a.task,
                    [w, x_cl, y_cl, indices_cl, x = a.inputs[0], y = a.outputs[0], argmax = a.outputs[1]]() mutable {
                      x_cl.copy_(x);
                      at::max_pool2d_with_indices_out(y_cl, indices_cl, x_cl, w.kernel, w.stride, w.padding,
                                                      /*dilation=*/{1, 1}, w.ceil_mode);
                      y.copy_(y_cl);
                      argmax.copy_(indices_cl);
                    });
}

Expected<std::unique_ptr<Kernel>> CreateAvgPoolV2(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(PoolWindow w, ReadPoolWindow(a));
  GE_ASSIGN_OR_RETURN(bool exclusive, a.Attr<bool>("exclusive"));
  GE_ASSIGN_OR_RETURN(int64_t divisor, a.Attr<int64_t>("divisor_override"));
  std::optional<int64_t> divisor_override;
  if (divisor != 0) divisor_override = divisor;
  return MakeKernel(a.task, [=, x = a.inputs[0], y = a.outputs[0]]() mutable {
    at::avg_pool2d_out(y, x, w.kernel, w.stride, w.padding, w.ceil_mode, /*count_include_pad=*/!exclusive,
                       divisor_override);
  });
}

Expected<std::unique_ptr<Kernel>> CreateAdaptiveAvgPool2d(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(IntList size, a.Attr<IntList>("output_size"));
  return MakeKernel(a.task,
                    [size, x = a.inputs[0], y = a.outputs[0]]() mutable { at::adaptive_avg_pool2d_out(y, x, size); });
}

Expected<std::unique_ptr<Kernel>> CreateBatchNorm(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(double eps, a.Attr<double>("epsilon"));
  // Inference mode leaves these empty; ATen still wants tensors to write them to.
  at::Tensor save_mean = at::empty({0}, a.inputs[3].options());
  at::Tensor save_invstd = at::empty({0}, a.inputs[3].options());
  return MakeKernel(a.task, [=, x = a.inputs[0], scale = a.inputs[1], offset = a.inputs[2], mean = a.inputs[3],
                             var = a.inputs[4], y = a.outputs[0]]() mutable {
    at::native_batch_norm_out(y, save_mean, save_invstd, x, scale, offset, mean, var, /*training=*/false,
                              /*momentum=*/0.0, eps);
  });
}

Expected<std::unique_ptr<Kernel>> CreateSoftmaxV2(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(IntList axes, a.Attr<IntList>("axes"));
  const int64_t dim = axes[0];
  return MakeKernel(a.task, [dim, x = a.inputs[0], y = a.outputs[0]]() mutable { at::_softmax_out(y, x, dim, false); });
}

// ATen's CPU flash attention (the kernel torch itself uses for scaled_dot_product_attention on
// CPU) over [B, H, L, E]; 3-D inputs are [N, L, E] viewed as [N, 1, L, E]. The mask is expanded
// to the scores' shape as a view: every tensor the run touches is prepared here, at load.
Expected<std::unique_ptr<Kernel>> CreateFusedAttention(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(double scale, a.Attr<double>("scale"));
  GE_ASSIGN_OR_RETURN(bool causal, a.Attr<bool>("is_causal"));
  auto as4d = [](const at::Tensor& t) { return t.dim() == 4 ? t : t.unsqueeze(1); };
  at::Tensor q = as4d(a.inputs[0]), k = as4d(a.inputs[1]), v = as4d(a.inputs[2]), y = as4d(a.outputs[0]);
  std::optional<at::Tensor> mask;
  if (a.inputs.size() > 3 && a.inputs[3].defined()) {
    std::vector<int64_t> scores(a.inputs[0].sizes().begin(), a.inputs[0].sizes().end());
    scores.back() = a.inputs[1].size(-2);
    mask = as4d(a.inputs[3].expand(scores));
  }
  return MakeKernel(a.task, [=]() mutable {
    auto out = at::_scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal, mask, scale);
    y.copy_(std::get<0>(out));
  });
}

Expected<std::unique_ptr<Kernel>> CreateLayerNorm(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(int64_t axis, a.Attr<int64_t>("begin_norm_axis"));
  GE_ASSIGN_OR_RETURN(double eps, a.Attr<double>("epsilon"));
  const at::Tensor& x = a.inputs[0];
  if (axis < 0) axis += x.dim();
  IntList normalized(x.sizes().begin() + axis, x.sizes().end());
  std::optional<at::Tensor> gamma, beta;
  if (a.inputs[1].defined()) gamma = a.inputs[1];
  if (a.inputs[2].defined()) beta = a.inputs[2];
  // ATen gives 1/sqrt(var + eps); the IR's third output is the variance itself, so rstd is
  // written into that output's bytes and turned into the variance there when anyone reads it.
  const bool want_variance = a.task.output_used.size() > 2 && a.task.output_used[2];
  return MakeKernel(a.task, [=, y = a.outputs[0], mean = a.outputs[1], variance = a.outputs[2]]() mutable {
    at::native_layer_norm_out(y, mean, variance, x, normalized, gamma, beta, eps);
    if (want_variance) {
      variance.pow_(-2);
      variance.sub_(eps);
    }
  });
}

}  // namespace

void RegisterNnKernels(CpuKernelRegistry& r) {
  r.Register("Conv2D", CreateConv2D);
  r.Register("Conv2DTranspose", CreateConv2DTranspose);
  r.Register("Conv2DBackpropFilterD", CreateConv2DBackpropFilter);
  r.Register(
      "MaxPoolV3", CreateMaxPoolV3,
      [](const std::vector<TensorDesc>& inputs, const std::vector<TensorDesc>& outputs, const AttrMap&) {
        // channels-last copies of x and y, and the argmax indices
        return std::vector<TensorDesc>{inputs.at(0), outputs.at(0), TensorDesc(DataType::kInt64, outputs.at(0).shape)};
      });
  r.Register("MaxPoolWithArgmaxV2", CreateMaxPoolWithArgmax,
             [](const std::vector<TensorDesc>& inputs, const std::vector<TensorDesc>& outputs, const AttrMap&) {
               // channels-last copies of x, y and the argmax
               return std::vector<TensorDesc>{inputs.at(0), outputs.at(0), outputs.at(1)};
             });
  r.Register("AvgPoolV2", CreateAvgPoolV2);
  r.Register("AdaptiveAvgPool2d", CreateAdaptiveAvgPool2d);
  r.Register("BatchNorm", CreateBatchNorm);
  r.Register("SoftmaxV2", CreateSoftmaxV2);
  r.Register("FusedAttention", CreateFusedAttention);
  r.Register("LayerNorm", CreateLayerNorm);
}

}  // namespace ge::cpu
