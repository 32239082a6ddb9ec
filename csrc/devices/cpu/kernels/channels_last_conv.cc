#include "devices/cpu/kernels/channels_last_conv.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include <ATen/Parallel.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/full.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "devices/cpu/kernels/repack_on_change.h"
#include "ge/base/logging.h"

namespace ge::cpu {
namespace {

void Convolve(at::Tensor& y, const at::Tensor& x, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
              const ConvWindow& c) {
  at::convolution_out(y, x, weight, bias, c.stride, c.padding, c.dilation, /*transposed=*/false,
                      /*output_padding=*/{0, 0}, c.groups);
}

onednn::Dims4 Dims(at::IntArrayRef v) { return {v[0], v[1], v[2], v[3]}; }

// Writes `weight` (in its strides) in `conv`'s primitive's layout into `packed`.
Status PackInto(onednn::Conv2D& conv, const at::Tensor& weight, void* packed) {
  return conv.PackWeight(weight.const_data_ptr<float>(), Dims(weight.strides()), packed);
}

// A weight in `conv`'s primitive's layout (a byte tensor, from torch's 64-byte-aligned allocator).
Expected<at::Tensor> PackWeight(onednn::Conv2D& conv, const at::Tensor& weight) {
  at::Tensor packed = at::empty({static_cast<int64_t>(conv.PackedWeightBytes())}, weight.options().dtype(at::kByte));
  GE_RETURN_IF_ERROR(PackInto(conv, weight, packed.data_ptr()));
  return packed;
}

// `late`: a primitive made without the residual and activation post-ops (OneDnnConvFor's), which
// are applied after it.
void RunOneDnn(onednn::Conv2D& conv, const at::Tensor& x, const at::Tensor& packed,
               const std::optional<at::Tensor>& bias, ChannelAffine* affine, const at::Tensor& residual,
               const CpuEpilogue* activation, at::Tensor& y, bool late = false) {
  onednn::Conv2DBuffers buffers;
  buffers.x = x.const_data_ptr<float>();
  buffers.packed_weight = packed.const_data_ptr();
  if (bias) buffers.bias = bias->const_data_ptr<float>();
  if (affine != nullptr) {
    affine->Update();
    buffers.scale = affine->scale().const_data_ptr<float>();
    buffers.shift = affine->shift().const_data_ptr<float>();
  }
  if (residual.defined() && !late) buffers.residual = residual.const_data_ptr<float>();
  buffers.y = y.data_ptr<float>();
  const Status run = conv.Run(buffers);
  TORCH_CHECK(run.ok(), run.message());
  if (late)
    AddResidualThenActivate(activation, residual, y);
  else
    FinishAfterPrimitive(activation, y);
}

// A weight that is a graph input with its inference batch norm folded in, packed for `conv` (a
// primitive made with a bias and without the norm's post-ops): weight * scale per output channel,
// bias * scale + shift. Packed again when the weight's bytes change (RepackOnChange's digest) or
// the norm's scale does (compared with the one packed, every call: Cout floats); the bias is
// folded every call. What frozen parameters get from BatchNormFold, without giving up changes.
class FoldedRepack {
 public:
  FoldedRepack(std::shared_ptr<onednn::Conv2D> conv, const at::Tensor& weight, std::optional<at::Tensor> bias,
               std::shared_ptr<ChannelAffine> affine)
      : bias_(std::move(bias)),
        affine_(std::move(affine)),
        folded_bias_(at::empty({weight.size(0)}, weight.options())),
        // NaN: no scale compares equal to it, so the first call records the scale it packs with.
        packed_scale_(at::full({weight.size(0)}, std::numeric_limits<float>::quiet_NaN(), weight.options())),
        repack_(weight, conv->PackedWeightBytes(), [conv, affine = affine_](const at::Tensor& w, void* packed) {
          // (allocates: runs only when something changed)
          return PackInto(*conv, w.mul(affine->scale().view({-1, 1, 1, 1})), packed);
        }) {}

  // Folds the norm's current values in; the packed weight and the bias for this call.
  const at::Tensor& Packed() {
    affine_->Update();
    const at::Tensor& scale = affine_->scale();
    const size_t bytes = static_cast<size_t>(scale.nbytes());
    if (std::memcmp(scale.const_data_ptr(), packed_scale_.const_data_ptr(), bytes) != 0) {
      std::memcpy(packed_scale_.data_ptr(), scale.const_data_ptr(), bytes);
      repack_.Invalidate();
    }
    const float *s = scale.const_data_ptr<float>(), *shift = affine_->shift().const_data_ptr<float>();
    const float* b = bias_ ? bias_->const_data_ptr<float>() : nullptr;
    float* folded = folded_bias_.data_ptr<float>();
    for (int64_t k = 0; k < folded_bias_.size(0); ++k) folded[k] = (b ? b[k] : 0.f) * s[k] + shift[k];
    return repack_.Packed();
  }
  const at::Tensor& bias() const { return folded_bias_; }
  std::vector<MemoryRange> Memory() const { return repack_.Memory(); }

 private:
  std::optional<at::Tensor> bias_;
  std::shared_ptr<ChannelAffine> affine_;
  at::Tensor folded_bias_, packed_scale_;  // packed_scale_: the scale the packing was made with
  RepackOnChange repack_;
};

bool Dense4d(const at::Tensor& t) {
  return t.scalar_type() == at::kFloat && t.dim() == 4 && t.is_non_overlapping_and_dense();
}

// No bias, or a contiguous float32 one.
bool DenseBias(const ChannelsLastConv& conv) {
  return !conv.bias || (conv.bias->scalar_type() == at::kFloat && conv.bias->is_contiguous() && conv.bias->dim() == 1);
}

// oneDNN's primitive for these operands, or null where it does not take them (then only the
// ATen kernels are offered). `folded`: for the weight with the batch norm folded in -- a bias,
// no norm post-ops. `late`: without the residual and activation post-ops (RunOneDnn's late).
std::shared_ptr<onednn::Conv2D> OneDnnConvFor(const ChannelsLastConv& conv, bool folded = false, bool late = false) {
  if (!Dense4d(conv.x) || !Dense4d(conv.weight) || !Dense4d(conv.y) || !DenseBias(conv) ||
      (conv.residual.defined() && !Dense4d(conv.residual)))
    return nullptr;
  onednn::Conv2DSpec spec;
  spec.x_sizes = Dims(conv.x.sizes());
  spec.x_strides = Dims(conv.x.strides());
  spec.w_sizes = Dims(conv.weight.sizes());
  spec.y_sizes = Dims(conv.y.sizes());
  spec.y_strides = Dims(conv.y.strides());
  const ConvWindow& w = conv.window;
  spec.stride = {w.stride[0], w.stride[1]};
  spec.padding = {w.padding[0], w.padding[1]};
  spec.dilation = {w.dilation[0], w.dilation[1]};
  spec.groups = w.groups;
  spec.bias = conv.bias.has_value() || folded;
  spec.channel_affine = conv.affine != nullptr && !folded;
  spec.residual = conv.residual.defined() && !late;
  if (spec.residual) spec.residual_strides = Dims(conv.residual.strides());
  if (conv.activation != nullptr && !late) spec.activation = conv.activation->primitive_post_op;
  auto made = onednn::Conv2D::Create(spec);
  if (!made.ok()) {
    GE_LOGD("no oneDNN kernel for a convolution: {}", made.status().message());
    return nullptr;
  }
  return std::shared_ptr<onednn::Conv2D>(std::move(*made));
}

// A float32 NCHW view of dense NHWC bytes (channels-last strides).
bool DenseNhwc(const at::Tensor& t) {
  return t.scalar_type() == at::kFloat && t.dim() == 4 && t.permute({0, 2, 3, 1}).is_contiguous();
}

// The few-pixel kernel's geometry where it takes these operands (float32, NHWC, groups 1, at
// most kFewPixelsMax output pixels).
std::optional<FewPixelGeometry> FewPixelsFor(const ChannelsLastConv& conv) {
  // (A dense weight: one that is an input is digested as stored, RepackOnChange.)
  if (!DenseNhwc(conv.x) || !DenseNhwc(conv.y) || conv.weight.scalar_type() != at::kFloat || conv.weight.dim() != 4 ||
      !conv.weight.is_non_overlapping_and_dense() || !DenseBias(conv) || conv.window.groups != 1 ||
      (conv.residual.defined() && !DenseNhwc(conv.residual)))
    return std::nullopt;
  FewPixelGeometry g;
  g.n = conv.x.size(0);
  g.cin = conv.x.size(1);
  g.h = conv.x.size(2);
  g.w = conv.x.size(3);
  g.cout = conv.weight.size(0);
  g.kh = conv.weight.size(2);
  g.kw = conv.weight.size(3);
  g.oh = conv.y.size(2);
  g.ow = conv.y.size(3);
  for (int d = 0; d < 2; ++d) {
    g.stride[d] = conv.window.stride[d];
    g.pad[d] = conv.window.padding[d];
    g.dilation[d] = conv.window.dilation[d];
  }
  if (g.pixels() > kFewPixelsMax || g.pixels() == 0 || conv.weight.size(1) != g.cin) return std::nullopt;
  return g;
}

Status PackFewPixels(const FewPixelGeometry& g, const at::Tensor& weight, void* packed) {
  const int64_t strides[4] = {weight.stride(0), weight.stride(1), weight.stride(2), weight.stride(3)};
  PackFewPixelWeight(g, weight.const_data_ptr<float>(), strides, static_cast<float*>(packed));
  return {};
}

// The im2col scratch of a few-pixel kernel, made with it at load: a run allocates nothing (each
// pooled program of a graph has kernels of its own, so concurrent runs never share one).
at::Tensor Im2colScratch(const FewPixelGeometry& g, const at::Tensor& x) {
  return at::empty({g.im2col_floats()}, x.options());
}

// Where an unpacked few-pixel kernel can read `weight` as it is: each output channel's values one
// dense row of K (any order of cin, kh, kw within it, which the im2col then follows).
std::optional<WindowOrder> UnpackedWindowOrder(const at::Tensor& weight) {
  if (!weight.is_non_overlapping_and_dense() || weight.stride(0) * weight.size(0) != weight.numel())
    return std::nullopt;
  return WindowOrder{weight.stride(1), weight.stride(2), weight.stride(3)};
}

// The weight a few-pixel kernel reads: packed in blocks of output channels, or as stored.
struct FewPixelWeight {
  const float* packed = nullptr;
  const float* rows = nullptr;
};

// y = conv(x) with the epilogue, by a few-pixel kernel on `weight`: the im2col into `cols` in
// `order` (split over the pixels), the product split over blocks of output channels, then the
// activation in place.
void RunFewPixels(const FewPixelGeometry& g, const WindowOrder& order, const ChannelsLastConv& c,
                  const FewPixelWeight& weight, at::Tensor& cols) {
  const float* x = c.x.const_data_ptr<float>();
  at::parallel_for(0, g.pixels(), 1, [&](int64_t begin, int64_t end) {
    FewPixelIm2col(g, order, x, cols.data_ptr<float>(), begin, end);
  });
  FewPixelArgs args;
  args.geometry = &g;
  args.cols = cols.const_data_ptr<float>();
  args.packed = weight.packed;
  args.rows = weight.rows;
  if (c.bias) args.bias = c.bias->const_data_ptr<float>();
  if (c.affine) {
    c.affine->Update();
    args.scale = c.affine->scale().const_data_ptr<float>();
    args.shift = c.affine->shift().const_data_ptr<float>();
  }
  if (c.residual.defined()) args.residual = c.residual.const_data_ptr<float>();
  args.y = c.y.data_ptr<float>();
  auto block = [&](int64_t b) {
    if (args.rows != nullptr)
      FewPixelRows(args, b * kFewPixelChannels, std::min(g.cout, (b + 1) * kFewPixelChannels));
    else
      FewPixelBlocks(args, b, b + 1);
  };
  // Blocks handed out one at a time rather than split evenly up front: a block streams its part
  // of the weight from memory, and one core of a VM was measured ~40% slower than the other
  // over a whole call (a neighbour's load), which an even split makes everyone wait for.
  std::atomic<int64_t> next{0};
  at::parallel_for(0, at::get_num_threads(), 1, [&](int64_t, int64_t) {
    for (int64_t b = next++; b < g.blocks(); b = next++) block(b);
  });
  if (c.activation != nullptr) {
    at::Tensor y = c.y;
    c.activation->apply_in_place(y);
  }
}

// What ATen's kernels keep of `conv` (not oneDNN's primitive and packed weight) and what
// oneDNN's keep (not the channels-last weight copy and NCHW scratch): the winning kernel holds
// one prepared copy of a constant weight, not both.
ChannelsLastConv WithoutOneDnn(ChannelsLastConv c) {
  c.onednn = c.onednn_folded = c.onednn_late = c.onednn_folded_late = nullptr;
  c.packed_weight = c.packed_weight_late = at::Tensor();
  return c;
}

ChannelsLastConv ForAten(ChannelsLastConv c) {
  c = WithoutOneDnn(std::move(c));
  c.few_pixel_weight = at::Tensor();
  return c;
}

// The operands a oneDNN candidate runs on: its primitive and its packed or repacking weight are
// captured beside them, so no primitive or packing stays in the copy.
ChannelsLastConv ForOneDnn(ChannelsLastConv c) {
  c = WithoutOneDnn(std::move(c));
  c.weight = c.x_nchw = c.y_nchw = c.few_pixel_weight = at::Tensor();
  return c;
}

ChannelsLastConv ForFewPixels(ChannelsLastConv c) {
  c = WithoutOneDnn(std::move(c));
  c.weight = c.x_nchw = c.y_nchw = at::Tensor();
  return c;
}

ChannelsLastConv ForUnpackedFewPixels(ChannelsLastConv c) {
  c = WithoutOneDnn(std::move(c));
  c.x_nchw = c.y_nchw = c.few_pixel_weight = at::Tensor();
  return c;
}

// Whether the residual has y's layout in bytes of its own (then AddResidualThenActivate adds it
// in one pass after a primitive that wrote y, and the late primitives are offered).
bool ResidualInYsLayout(const ChannelsLastConv& conv) {
  return conv.residual.defined() && Dense4d(conv.residual) && Dense4d(conv.y) &&
         conv.residual.strides() == conv.y.strides() && conv.residual.const_data_ptr() != conv.y.const_data_ptr();
}

// The oneDNN candidates (packed, repack, folded) of the primitives with every post-op or, `late`,
// of those without the residual and activation ("..._late").
void AddOneDnnCandidates(const ChannelsLastConv& conv, bool late, std::vector<KernelCandidate>& out) {
  const std::shared_ptr<onednn::Conv2D>& primitive = late ? conv.onednn_late : conv.onednn;
  const std::shared_ptr<onednn::Conv2D>& folded_primitive = late ? conv.onednn_folded_late : conv.onednn_folded;
  const at::Tensor& packed = late ? conv.packed_weight_late : conv.packed_weight;
  const std::string suffix = late ? "_late" : "";
  const at::Tensor bias = conv.bias ? *conv.bias : at::Tensor();
  if (primitive && packed.defined())
    out.push_back({"onednn_packed" + suffix,
                   [c = ForOneDnn(conv), primitive, packed, late]() mutable {
                     RunOneDnn(*primitive, c.x, packed, c.bias, c.affine.get(), c.residual, c.activation, c.y, late);
                   },
                   MemoryOf({packed, bias})});
  if (primitive && !conv.constant_weight) {
    auto repack = std::make_shared<RepackOnChange>(
        conv.weight, primitive->PackedWeightBytes(),
        [primitive](const at::Tensor& weight, void* to) { return PackInto(*primitive, weight, to); });
    std::vector<MemoryRange> cold = repack->Memory();
    if (bias.defined()) cold.push_back({bias.const_data_ptr(), bias.nbytes()});
    out.push_back({"onednn_repack" + suffix,
                   [c = ForOneDnn(conv), primitive, r = std::move(repack), late]() mutable {
                     RunOneDnn(*primitive, c.x, r->Packed(), c.bias, c.affine.get(), c.residual, c.activation, c.y,
                               late);
                   },
                   std::move(cold)});
  }
  if (folded_primitive) {
    auto folded = std::make_shared<FoldedRepack>(folded_primitive, conv.weight, conv.bias, conv.affine);
    std::vector<MemoryRange> cold = folded->Memory();
    if (bias.defined()) cold.push_back({bias.const_data_ptr(), bias.nbytes()});
    out.push_back({"onednn_folded" + suffix,
                   [c = ForOneDnn(conv), folded_primitive, f = std::move(folded), late]() mutable {
                     const at::Tensor& weight = f->Packed();
                     RunOneDnn(*folded_primitive, c.x, weight, f->bias(), nullptr, c.residual, c.activation, c.y, late);
                   },
                   std::move(cold)});
  }
}

}  // namespace

Expected<std::shared_ptr<ChannelAffine>> ChannelAffine::Create(const at::Tensor& gamma, const at::Tensor& beta,
                                                               const at::Tensor& mean, const at::Tensor& variance,
                                                               double epsilon) {
  for (const at::Tensor* t : {&gamma, &beta, &mean, &variance})
    if (t->scalar_type() != at::kFloat || t->dim() != 1 || !t->is_contiguous() || t->size(0) != gamma.size(0))
      return Unimplemented(
          "the batch norm's scale, offset, mean and variance must be contiguous float32 [{}], got {} {}", gamma.size(0),
          c10::toString(t->scalar_type()), t->sizes());
  auto affine = std::make_shared<ChannelAffine>();
  affine->gamma_ = gamma;
  affine->beta_ = beta;
  affine->mean_ = mean;
  affine->variance_ = variance;
  affine->epsilon_ = epsilon;
  affine->scale_ = at::empty_like(gamma);
  affine->shift_ = at::empty_like(gamma);
  return affine;
}

void ChannelAffine::Update() {
  const float *gamma = gamma_.const_data_ptr<float>(), *beta = beta_.const_data_ptr<float>(),
              *mean = mean_.const_data_ptr<float>(), *variance = variance_.const_data_ptr<float>();
  float *scale = scale_.data_ptr<float>(), *shift = shift_.data_ptr<float>();
  for (int64_t k = 0; k < gamma_.size(0); ++k) {  // as ATen's inference batch norm: in float
    scale[k] = gamma[k] / std::sqrt(variance[k] + static_cast<float>(epsilon_));
    shift[k] = beta[k] - mean[k] * scale[k];
  }
}

// A FusedConv2D's epilogue after an ATen convolution, in place while y is warm.
void ApplyConvEpilogue(at::Tensor& y, ChannelAffine* affine, const at::Tensor& residual,
                       const CpuEpilogue* activation) {
  if (affine != nullptr) {
    affine->Update();
    const int64_t k = affine->scale().size(0);
    y.mul_(affine->scale().view({1, k, 1, 1})).add_(affine->shift().view({1, k, 1, 1}));
  }
  if (residual.defined()) y.add_(residual);
  if (activation != nullptr) activation->apply_in_place(y);
}

Status PrepareChannelsLastConv(ChannelsLastConv& conv) {
  conv.onednn = OneDnnConvFor(conv);
  const bool fold = conv.onednn && conv.affine && !conv.constant_weight;
  if (fold) conv.onednn_folded = OneDnnConvFor(conv, /*folded=*/true);
  if (conv.onednn && ResidualInYsLayout(conv)) {
    conv.onednn_late = OneDnnConvFor(conv, /*folded=*/false, /*late=*/true);
    if (fold) conv.onednn_folded_late = OneDnnConvFor(conv, /*folded=*/true, /*late=*/true);
  }
  conv.few_pixels = FewPixelsFor(conv);
  if (!conv.constant_weight) return {};
  if (conv.onednn) {
    GE_ASSIGN_OR_RETURN(conv.packed_weight, PackWeight(*conv.onednn, conv.weight));
  }
  if (conv.onednn_late) {
    GE_ASSIGN_OR_RETURN(conv.packed_weight_late, PackWeight(*conv.onednn_late, conv.weight));
  }
  if (conv.few_pixels) {
    conv.few_pixel_weight = at::empty({conv.few_pixels->packed_floats()}, conv.weight.options());
    GE_RETURN_IF_ERROR(PackFewPixels(*conv.few_pixels, conv.weight, conv.few_pixel_weight.data_ptr()));
  }
  conv.weight = conv.weight.contiguous(at::MemoryFormat::ChannelsLast);
  return {};
}

// Each candidate's `cold` memory is the weight it reads (the task's, or its prepared copy) and the
// bias: what a run of a whole network leaves out of the caches (KernelCandidate::cold).
std::vector<KernelCandidate> ChannelsLastConvCandidates(const ChannelsLastConv& conv) {
  const at::Tensor bias = conv.bias ? *conv.bias : at::Tensor();
  std::vector<KernelCandidate> out{{"nhwc",
                                    [c = ForAten(conv)]() mutable {
                                      Convolve(c.y, c.x, c.weight, c.bias, c.window);
                                      ApplyConvEpilogue(c.y, c.affine.get(), c.residual, c.activation);
                                    },
                                    MemoryOf({conv.weight, bias})}};
  if (conv.x_nchw.defined() && conv.y_nchw.defined())
    out.push_back({"nchw",
                   [c = ForAten(conv)]() mutable {
                     c.x_nchw.copy_(c.x);
                     Convolve(c.y_nchw, c.x_nchw, c.weight, c.bias, c.window);
                     c.y.copy_(c.y_nchw);
                     ApplyConvEpilogue(c.y, c.affine.get(), c.residual, c.activation);
                   },
                   MemoryOf({conv.weight, bias})});
  AddOneDnnCandidates(conv, /*late=*/false, out);
  AddOneDnnCandidates(conv, /*late=*/true, out);
  if (conv.few_pixels && conv.few_pixel_weight.defined())
    out.push_back(
        {"few_pixels",
         [g = *conv.few_pixels, c = ForFewPixels(conv), cols = Im2colScratch(*conv.few_pixels, conv.x)]() mutable {
           RunFewPixels(g, PackedWindowOrder(g), c, {c.few_pixel_weight.const_data_ptr<float>()}, cols);
         },
         MemoryOf({conv.few_pixel_weight, bias})});
  if (conv.few_pixels && !conv.constant_weight) {
    const FewPixelGeometry g = *conv.few_pixels;
    auto repack = std::make_shared<RepackOnChange>(
        conv.weight, static_cast<size_t>(g.packed_floats()) * sizeof(float),
        [g](const at::Tensor& weight, void* packed) { return PackFewPixels(g, weight, packed); });
    std::vector<MemoryRange> cold = repack->Memory();
    if (bias.defined()) cold.push_back({bias.const_data_ptr(), bias.nbytes()});
    out.push_back({"few_pixels",
                   [g, c = ForFewPixels(conv), r = std::move(repack), cols = Im2colScratch(g, conv.x)]() mutable {
                     const float* packed = static_cast<const float*>(r->Packed().const_data_ptr());
                     RunFewPixels(g, PackedWindowOrder(g), c, {packed}, cols);
                   },
                   std::move(cold)});
  }
  if (conv.few_pixels)
    if (const std::optional<WindowOrder> order = UnpackedWindowOrder(conv.weight))
      out.push_back({"few_pixels_unpacked",
                     [g = *conv.few_pixels, order = *order, c = ForUnpackedFewPixels(conv),
                      cols = Im2colScratch(*conv.few_pixels, conv.x)]() mutable {
                       RunFewPixels(g, order, c, {nullptr, c.weight.const_data_ptr<float>()}, cols);
                     },
                     MemoryOf({conv.weight, bias})});
  return out;
}

std::vector<std::string> ForcibleConvKernels() {
  return {"nhwc",
          "nchw",
          "onednn_packed",
          "onednn_repack",
          "onednn_folded",
          "onednn_packed_late",
          "onednn_repack_late",
          "onednn_folded_late",
          "few_pixels",
          "few_pixels_unpacked"};
}

std::function<void()> ForcedConvKernel(const ChannelsLastConv& conv, const std::string& name) {
  std::vector<KernelCandidate> candidates = ChannelsLastConvCandidates(conv);
  const std::string late = "_late";
  const bool offered =
      std::any_of(candidates.begin(), candidates.end(), [&](const KernelCandidate& c) { return c.name == name; });
  const bool late_name = name.size() > late.size() && name.compare(name.size() - late.size(), late.size(), late) == 0;
  return CandidateNamed(std::move(candidates),
                        !offered && late_name ? name.substr(0, name.size() - late.size()) : name);
}

std::string ChannelsLastConvKey(const ChannelsLastConv& conv) {
  return fmt::format("Conv2D NHWC {} x{} w{} stride{} pad{} dilation{} groups={}{}{}{}{}{} threads={}",
                     c10::toString(conv.x.scalar_type()), conv.x.sizes(), conv.weight.sizes(), conv.window.stride,
                     conv.window.padding, conv.window.dilation, conv.window.groups, conv.bias ? " +bias" : "",
                     conv.affine ? " +batchnorm" : "", conv.residual.defined() ? " +residual" : "",
                     conv.activation ? fmt::format(" {}", EpilogueActivationName(conv.activation->activation)) : "",
                     conv.constant_weight ? " const-weight" : "", at::get_num_threads());
}

}  // namespace ge::cpu
