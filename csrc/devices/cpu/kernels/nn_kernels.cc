// Convolution, pooling, normalization and softmax kernels (attention: attention_kernels.cc).
#include <cmath>

#include <ATen/Parallel.h>
#include <ATen/ops/_softmax.h>
#include <ATen/ops/adaptive_avg_pool2d.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/avg_pool2d.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/masked_fill.h>
#include <ATen/ops/max_pool2d_with_indices.h>
#include <ATen/ops/native_batch_norm.h>
#include <ATen/ops/native_layer_norm.h>
#include <ATen/ops/pow.h>

#include "devices/cpu/kernel_registry.h"
#include "devices/cpu/kernels/channels_last_conv.h"
#include "devices/cpu/kernels/filter_gradient.h"
#include "devices/cpu/kernels/kernel_choice.h"
#include "devices/cpu/kernels/max_pool_nhwc.h"

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

// data_format NHWC (channels last): x and y hold [N, H, W, C] and the window attributes are in
// that order; ATen sees the same bytes as NCHW tensors with channels-last strides, which its
// convolutions and pools keep (oneDNN runs them without reordering the activations).
bool ChannelsLast(const AttrMap& attrs) { return GetAttrOr<std::string>(attrs, "data_format", "NCHW") == "NHWC"; }
bool ChannelsLast(const KernelArgs& a) { return ChannelsLast(a.task.attrs); }

// An activation as ATen's NCHW view: NHWC bytes become a channels-last-strided NCHW tensor.
at::Tensor NchwView(const at::Tensor& t, bool channels_last) { return channels_last ? t.permute({0, 3, 1, 2}) : t; }

// The H and W entries of a per-dim window attribute.
IntList Spatial(const IntList& per_dim, bool channels_last) {
  return channels_last ? IntList{per_dim[1], per_dim[2]} : IntList{per_dim[2], per_dim[3]};
}

// The convolution ops' window attributes as ATen takes them (ConvWindow, filter_gradient.h).
Expected<ConvWindow> ReadConvWindow(const KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(IntList strides, a.Attr<IntList>("strides"));
  GE_ASSIGN_OR_RETURN(IntList dilations, a.Attr<IntList>("dilations"));
  ConvWindow w;
  GE_ASSIGN_OR_RETURN(w.groups, a.Attr<int64_t>("groups"));
  GE_ASSIGN_OR_RETURN(w.padding, SymmetricPadding(a));
  w.stride = Spatial(strides, ChannelsLast(a));
  w.dilation = Spatial(dilations, ChannelsLast(a));
  return w;
}

// A FusedConv2D's epilogue: an inference batch norm of its inputs 4-7 (scale, offset, mean,
// variance) with `epsilon`, its input 3 as the residual, and its activation (each may be absent).
struct ConvEpilogue {
  bool batch_norm = false;
  double epsilon = 0;
  bool residual = false;
  const CpuEpilogue* activation = nullptr;
};

// The batch norm of a FusedConv2D task as a per-channel scale and shift (null: it has none).
Expected<std::shared_ptr<ChannelAffine>> AffineOf(const KernelArgs& a, const ConvEpilogue& epilogue) {
  if (!epilogue.batch_norm) return std::shared_ptr<ChannelAffine>();
  auto affine = ChannelAffine::Create(a.inputs[4], a.inputs[5], a.inputs[6], a.inputs[7], epilogue.epsilon);
  if (!affine.ok()) return affine.status().WithContext(fmt::format("{} '{}'", a.task.type, a.task.name));
  return affine;
}

// An NHWC Conv2D's or FusedConv2D's operands as ATen sees them (the weight as the task holds it).
Expected<ChannelsLastConv> ChannelsLastOperands(const KernelArgs& a, const ConvWindow& c,
                                                const ConvEpilogue& epilogue) {
  ChannelsLastConv conv;
  GE_ASSIGN_OR_RETURN(conv.affine, AffineOf(a, epilogue));
  conv.x = NchwView(a.inputs[0], true);
  conv.weight = a.inputs[1];
  conv.y = NchwView(a.outputs[0], true);
  if (a.inputs[2].defined()) conv.bias = a.inputs[2];
  conv.window = c;
  if (a.workspaces.size() == 2) {
    conv.x_nchw = a.workspaces[0];
    conv.y_nchw = a.workspaces[1];
  }
  conv.constant_weight = a.InputIsConstant(1);
  if (epilogue.residual) conv.residual = NchwView(a.inputs[3], true);
  conv.activation = epilogue.activation;
  return conv;
}

// The NHWC form (channels_last_conv.h): ATen's channels-last kernel, a detour through NCHW
// copies or the engine's oneDNN primitive on a packed weight (packed at load, or again when the
// weight changed), whichever measured faster for these shapes (or the one TORCHAIR_GE_CPU_CONV
// names). A producer inside a FusedKernel has no workspaces: no NCHW detour.
Expected<std::unique_ptr<Kernel>> CreateChannelsLastConv2D(KernelArgs& a, const ConvWindow& c,
                                                           const ConvEpilogue& epilogue) {
  GE_ASSIGN_OR_RETURN(ChannelsLastConv conv, ChannelsLastOperands(a, c, epilogue));
  GE_RETURN_IF_ERROR(PrepareChannelsLastConv(conv).WithContext(fmt::format("{} '{}'", a.task.type, a.task.name)));
  GE_ASSIGN_OR_RETURN(std::string setting, ForcedKernelSetting("TORCHAIR_GE_CPU_CONV", ForcibleConvKernels()));
  if (setting != "measure") return MakeKernel(a.task, ForcedConvKernel(conv, setting));
  auto timed = [&]() {
    Expected<ChannelsLastConv> operands = ChannelsLastOperands(a.WithTimingOperands(), c, epilogue);
    if (!operands.ok()) return std::vector<KernelCandidate>();  // (stand-ins of operands that were taken)
    ChannelsLastConv& scratch = *operands;
    scratch.onednn = conv.onednn;
    scratch.onednn_folded = conv.onednn_folded;
    scratch.onednn_late = conv.onednn_late;
    scratch.onednn_folded_late = conv.onednn_folded_late;
    scratch.few_pixels = conv.few_pixels;
    if (conv.constant_weight) {  // the real weight, already prepared
      scratch.weight = conv.weight;
      scratch.packed_weight = conv.packed_weight;
      scratch.packed_weight_late = conv.packed_weight_late;
      scratch.few_pixel_weight = conv.few_pixel_weight;
    }
    return ChannelsLastConvCandidates(scratch);
  };
  return MakeKernel(a.task, FastestByMeasurement(ChannelsLastConvKey(conv), ChannelsLastConvCandidates(conv), timed));
}

// The workspaces of an NHWC Conv2D: NCHW scratch for x and y (its "nchw" kernel).
std::vector<TensorDesc> ConvWorkspaces(const std::vector<TensorDesc>& inputs, const std::vector<TensorDesc>& outputs,
                                       const AttrMap& attrs) {
  if (!ChannelsLast(attrs)) return {};
  auto nchw = [](const TensorDesc& nhwc) {
    const Shape& s = nhwc.shape;
    return TensorDesc(nhwc.dtype, {s.at(0), s.at(3), s.at(1), s.at(2)});
  };
  return {nchw(inputs.at(0)), nchw(outputs.at(0))};
}

// Conv2D and FusedConv2D: the NHWC kernels above, or ATen's convolution on NCHW tensors (then a
// FusedConv2D's epilogue in place).
Expected<std::unique_ptr<Kernel>> CreateConvolution(KernelArgs& a, const ConvEpilogue& epilogue) {
  GE_ASSIGN_OR_RETURN(ConvWindow c, ReadConvWindow(a));
  if (ChannelsLast(a)) return CreateChannelsLastConv2D(a, c, epilogue);
  std::optional<at::Tensor> bias;
  if (a.inputs[2].defined()) bias = a.inputs[2];
  const at::Tensor residual = epilogue.residual ? a.inputs[3] : at::Tensor();
  const CpuEpilogue* activation = epilogue.activation;
  GE_ASSIGN_OR_RETURN(std::shared_ptr<ChannelAffine> affine, AffineOf(a, epilogue));
  return MakeKernel(a.task, [=, x = a.inputs[0], w = a.inputs[1], y = a.outputs[0]]() mutable {
    at::convolution_out(y, x, w, bias, c.stride, c.padding, c.dilation, /*transposed=*/false,
                        /*output_padding=*/{0, 0}, c.groups);
    ApplyConvEpilogue(y, affine.get(), residual, activation);
  });
}

Expected<std::unique_ptr<Kernel>> CreateConv2D(KernelArgs& a) {
  if (a.inputs.size() > 3 && a.inputs[3].defined())
    return Unimplemented("Conv2D '{}': offset_w (int8) is not supported on CPU", a.task.name);
  return CreateConvolution(a, {});
}

// Conv2D with its batch norm, residual add and activation (the library-epilogue rule makes it
// from an NHWC Conv2D): oneDNN's post-ops where a oneDNN kernel wins, else ATen's in place after
// ATen's convolution.
Expected<std::unique_ptr<Kernel>> CreateFusedConv2D(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(std::string name, a.Attr<std::string>("fused_op_type"));
  ConvEpilogue epilogue;
  epilogue.batch_norm = a.inputs.size() > 7 && a.inputs[4].defined();
  if (epilogue.batch_norm) {
    GE_ASSIGN_OR_RETURN(epilogue.epsilon, a.Attr<double>("epsilon"));
  }
  epilogue.residual = a.inputs.size() > 3 && a.inputs[3].defined();
  if (!name.empty()) {
    const std::optional<EpilogueActivation> activation = EpilogueActivationNamed(name);
    epilogue.activation = activation ? FindCpuEpilogue(*activation) : nullptr;
    if (epilogue.activation == nullptr)
      return InvalidArgument("{} '{}': no CPU kernel for fused_op_type '{}'", a.task.type, a.task.name, name);
  }
  return CreateConvolution(a, epilogue);
}

// The weight gradient by oneDNN's backward-weights kernel or an im2col GEMM, whichever measured
// faster for these shapes on this CPU (timed on scratch tensors: the arena is not bound yet).
Expected<std::unique_ptr<Kernel>> CreateConv2DBackpropFilter(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(ConvWindow c, ReadConvWindow(a));
  const at::Tensor &x = a.inputs[0], &dy = a.inputs[1], &y = a.outputs[0];
  auto timed = [&]() {
    const KernelArgs s = a.WithTimingOperands();
    return FilterGradientCandidates(s.inputs[0], s.inputs[1], c, s.outputs[0]);
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
  const bool cl = ChannelsLast(a);
  if (global) {
    w.kernel = Spatial(a.inputs[0].sizes().vec(), cl);
    w.stride = w.kernel;
    w.padding = {0, 0};
    return w;
  }
  GE_ASSIGN_OR_RETURN(IntList ksize, a.Attr<IntList>("ksize"));
  GE_ASSIGN_OR_RETURN(IntList strides, a.Attr<IntList>("strides"));
  GE_ASSIGN_OR_RETURN(w.padding, SymmetricPadding(a));
  w.kernel = Spatial(ksize, cl);
  w.stride = Spatial(strides, cl);
  return w;
}

// A contiguous workspace of NCHW's size seen as an NCHW tensor stored channels-last (NHWC bytes).
at::Tensor AsChannelsLast(const at::Tensor& workspace) {
  const auto n = workspace.size(0), c = workspace.size(1), h = workspace.size(2), w = workspace.size(3);
  return workspace.view({n, h, w, c}).permute({0, 3, 1, 2});
}

// Max pooling runs channels-last: ATen's NCHW max-pool kernel walks each plane with the window's
// stride and does not vectorize, while the channels-last one vectorizes over channels -- 4x
// faster even with a layout copy each way (8x64x112x112, 3x3/2: 18.2 -> 4.5 ms), bit-identical.
// NCHW x and y go through channels-last copies (workspaces, MaxPoolWorkspaces); NHWC ones are
// read and written in place. ATen's argmax indices are plane indices (h * W + w) in either
// layout, so only their layout differs.
struct MaxPoolTensors {
  at::Tensor x, y, indices;        // what ATen reads and writes (channels-last strided)
  at::Tensor x_in, y_out, argmax;  // the task's own, when they are not the same bytes
};

MaxPoolTensors MaxPoolOperands(const KernelArgs& a, bool with_argmax) {
  MaxPoolTensors t;
  if (ChannelsLast(a)) {
    t.x = NchwView(a.inputs[0], true);
    t.y = NchwView(a.outputs[0], true);
    // (no workspace: a float pool the native kernel did not take after all -- a strided input)
    const at::Tensor indices = with_argmax ? a.outputs[1]
                               : a.workspaces.empty()
                                   ? at::empty(a.outputs[0].sizes(), a.outputs[0].options().dtype(at::kLong))
                                   : a.workspaces[0];
    t.indices = NchwView(indices, true);  // NHWC-shaped
    return t;
  }
  t.x = AsChannelsLast(a.workspaces[0]);
  t.y = AsChannelsLast(a.workspaces[1]);
  t.indices = AsChannelsLast(a.workspaces[2]);
  t.x_in = a.inputs[0];
  t.y_out = a.outputs[0];
  if (with_argmax) t.argmax = a.outputs[1];
  return t;
}

// The workspaces of a max pool: channels-last copies of an NCHW x and y and the indices (an
// NHWC pool needs only the indices; with an argmax output, or in float32 -- MaxPoolNhwc, which
// computes none -- not even those).
// Whether an NHWC pool needs an indices workspace: not with an argmax output, nor in float32.
bool NhwcPoolIndicesWorkspace(bool with_argmax, bool float32) { return !with_argmax && !float32; }

std::vector<TensorDesc> MaxPoolWorkspaces(const std::vector<TensorDesc>& inputs, const std::vector<TensorDesc>& outputs,
                                          const AttrMap& attrs) {
  const TensorDesc indices(DataType::kInt64, outputs.at(0).shape);
  if (ChannelsLast(attrs))
    return NhwcPoolIndicesWorkspace(outputs.size() > 1, inputs.at(0).dtype == DataType::kFloat)
               ? std::vector<TensorDesc>{indices}
               : std::vector<TensorDesc>{};
  return {inputs.at(0), outputs.at(0), indices};
}

// An NHWC float32 pool whose indices nobody reads (MaxPoolV3; MaxPoolWithArgmaxV2 in inference)
// on dense tensors: MaxPoolNhwc's shape for it, else none (ATen's kernel runs).
std::optional<NhwcPoolShape> NativeMaxPool(const KernelArgs& a, bool with_argmax, const PoolWindow& w) {
  const at::Tensor &x = a.inputs[0], &y = a.outputs[0];
  const bool argmax_read = with_argmax && (a.task.output_used.size() < 2 || a.task.output_used[1]);
  if (!ChannelsLast(a) || argmax_read || x.scalar_type() != at::kFloat || y.scalar_type() != at::kFloat ||
      !x.is_contiguous() || !y.is_contiguous() || x.dim() != 4)
    return std::nullopt;
  NhwcPoolShape s{x.size(0), x.size(1), x.size(2), x.size(3), y.size(1), y.size(2), {}, {}, {}};
  for (int d = 0; d < 2; ++d) {
    s.kernel[d] = w.kernel[static_cast<size_t>(d)];
    s.stride[d] = w.stride[static_cast<size_t>(d)];
    s.pad[d] = w.padding[static_cast<size_t>(d)];
  }
  return s;
}

Expected<std::unique_ptr<Kernel>> CreateMaxPool(KernelArgs& a, bool with_argmax) {
  GE_ASSIGN_OR_RETURN(PoolWindow w, ReadPoolWindow(a));
  if (const std::optional<NhwcPoolShape> native = NativeMaxPool(a, with_argmax, w))
    return MakeKernel(a.task, [s = *native, x = a.inputs[0], y = a.outputs[0]]() mutable {
      MaxPoolNhwc(s, x.const_data_ptr<float>(), y.data_ptr<float>());
    });
  const size_t workspaces =
      ChannelsLast(a) ? NhwcPoolIndicesWorkspace(with_argmax, a.inputs[0].scalar_type() == at::kFloat) : 3;
  GE_CHECK(a.workspaces.size() == workspaces, "{} '{}': expected {} workspaces", a.task.type, a.task.name, workspaces);
  return MakeKernel(a.task, [w, t = MaxPoolOperands(a, with_argmax)]() mutable {
    if (t.x_in.defined()) t.x.copy_(t.x_in);
    at::max_pool2d_with_indices_out(t.y, t.indices, t.x, w.kernel, w.stride, w.padding, /*dilation=*/{1, 1},
                                    w.ceil_mode);
    if (t.y_out.defined()) t.y_out.copy_(t.y);
    if (t.argmax.defined()) t.argmax.copy_(t.indices);
  });
}

Expected<std::unique_ptr<Kernel>> CreateMaxPoolV3(KernelArgs& a) { return CreateMaxPool(a, false); }
Expected<std::unique_ptr<Kernel>> CreateMaxPoolWithArgmax(KernelArgs& a) { return CreateMaxPool(a, true); }

Expected<std::unique_ptr<Kernel>> CreateAvgPoolV2(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(PoolWindow w, ReadPoolWindow(a));
  GE_ASSIGN_OR_RETURN(bool exclusive, a.Attr<bool>("exclusive"));
  GE_ASSIGN_OR_RETURN(int64_t divisor, a.Attr<int64_t>("divisor_override"));
  std::optional<int64_t> divisor_override;
  if (divisor != 0) divisor_override = divisor;
  const bool cl = ChannelsLast(a);
  return MakeKernel(a.task, [=, x = NchwView(a.inputs[0], cl), y = NchwView(a.outputs[0], cl)]() mutable {
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
  const bool cl = ChannelsLast(a);
  return MakeKernel(a.task, [=, x = NchwView(a.inputs[0], cl), scale = a.inputs[1], offset = a.inputs[2],
                             mean = a.inputs[3], var = a.inputs[4], y = NchwView(a.outputs[0], cl)]() mutable {
    at::native_batch_norm_out(y, save_mean, save_invstd, x, scale, offset, mean, var, /*training=*/false,
                              /*momentum=*/0.0, eps);
  });
}

Expected<std::unique_ptr<Kernel>> CreateSoftmaxV2(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(IntList axes, a.Attr<IntList>("axes"));
  const int64_t dim = axes[0];
  return MakeKernel(a.task, [dim, x = a.inputs[0], y = a.outputs[0]]() mutable { at::_softmax_out(y, x, dim, false); });
}

// ATen's _safe_softmax has no out= form: the softmax, then the rows whose max is -inf (NaN in y)
// set to 0. The row maxima and their flags live in tensors made at load.
Expected<std::unique_ptr<Kernel>> CreateSafeSoftmax(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(IntList axes, a.Attr<IntList>("axes"));
  const at::Tensor& x = a.inputs[0];
  const int64_t dim = axes[0] < 0 ? axes[0] + x.dim() : axes[0];
  std::vector<int64_t> rows(x.sizes().begin(), x.sizes().end());
  rows[dim] = 1;
  at::Tensor row_max = at::empty(rows, x.options());
  at::Tensor masked = at::empty(rows, x.options().dtype(at::kBool));
  return MakeKernel(a.task, [=, y = a.outputs[0]]() mutable {
    at::_softmax_out(y, x, dim, false);
    if (x.numel() == 0) return;
    at::amax_out(row_max, x, dim, /*keepdim=*/true);
    at::eq_out(masked, row_max, -INFINITY);
    y.masked_fill_(masked, 0);
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
  r.Register("Conv2D", CreateConv2D, ConvWorkspaces);
  r.Register("FusedConv2D", CreateFusedConv2D, ConvWorkspaces);
  r.Register("Conv2DTranspose", CreateConv2DTranspose);
  r.Register("Conv2DBackpropFilterD", CreateConv2DBackpropFilter);
  r.Register("MaxPoolV3", CreateMaxPoolV3, MaxPoolWorkspaces);
  r.Register("MaxPoolWithArgmaxV2", CreateMaxPoolWithArgmax, MaxPoolWorkspaces);
  r.Register("AvgPoolV2", CreateAvgPoolV2);
  r.Register("AdaptiveAvgPool2d", CreateAdaptiveAvgPool2d);
  r.Register("BatchNorm", CreateBatchNorm);
  r.Register("SoftmaxV2", CreateSoftmaxV2);
  r.Register("SafeSoftmax", CreateSafeSoftmax);
  r.Register("LayerNorm", CreateLayerNorm);
}

}  // namespace ge::cpu
