// A Conv2D or FusedConv2D with data_format NHWC (the ChannelsLast pass) runs one of these
// kernels, whichever measured faster for its shapes on this CPU (kernel_choice.h); a
// FusedConv2D's residual add and activation are oneDNN's post-ops in the oneDNN kernels and
// ATen calls in place after ATen's:
//   "nhwc": ATen's convolution on the channels-last bytes as they are -- oneDNN without
//     reordering the activations; a weight that is not a constant is copied to channels-last by
//     ATen on every call (a constant one is copied once, at load);
//   "nchw": an NCHW copy of x, the plain convolution, and y copied back to NHWC (the copies are
//     the task's workspaces);
//   "onednn_packed", for a constant weight only (frozen parameters, folded BatchNorm): a oneDNN
//     convolution primitive made once for these shapes (devices/onednn/conv2d.h), writing
//     straight into y, with the weight reordered into its blocked layout once, at load;
//   "onednn_repack", for a weight that is a graph input: the same, with the weight packed again
//     whenever its bytes changed since it was last packed (a digest on every call,
//     repack_on_change.h);
//   "onednn_folded", for a weight that is a graph input under a batch norm: the same, with the
//     norm folded into the packed weight and into a bias (as BatchNormFold does for frozen
//     parameters) instead of applied as post-ops -- folded again when the weight's bytes or the
//     norm's scale change;
//   "onednn_packed_late", "onednn_repack_late", "onednn_folded_late", for a residual in y's
//     layout: the three above with the residual add and the activation in one pass after the
//     primitive instead of as its post-ops;
//   "few_pixels", for at most kFewPixelsMax output pixels (few_pixel_conv.h): an im2col and a
//     product that streams a packed weight once (packed at load, or again on a change as above);
//   "few_pixels_unpacked", as many pixels: the same on the weight as it is stored (the im2col
//     follows its order), so a weight that is a graph input is read once per call, where
//     "few_pixels" and "onednn_repack" read it to digest it and then read their packing.
// Of ATen's two, the first wins where activations are large against the weight (ResNet's early
// layers, ~30% per convolution on an AMD EPYC Zen 3), the second where the weight is (512
// channels at 4x4: the per-call weight copy costs more than the layout saves) and for a
// 3-channel stem. The oneDNN ones do no per-call weight reorder: ATen reorders every weight
// into oneDNN's layout on every call, which was half of a batch-1 ResNet-18's time on the Zen 3
// (13 of 27 ms).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "devices/cpu/kernels/epilogue_activations.h"
#include "devices/cpu/kernels/few_pixel_conv.h"
#include "devices/cpu/kernels/filter_gradient.h"
#include "devices/cpu/kernels/kernel_choice.h"
#include "devices/onednn/conv2d.h"

namespace ge::cpu {

// An inference batch norm after a convolution (a FusedConv2D's), as y * scale[k] + shift[k] per
// output channel k: scale = gamma / sqrt(variance + epsilon), shift = beta - mean * scale. Its
// parameters are graph inputs unless frozen (then BatchNormFold has folded the norm into the
// weight), so they may change between runs: Update computes the two vectors at the start of
// every run, a loop over the channels (~1 us for 512), where a separate BatchNorm task read and
// wrote the whole activation.
class ChannelAffine {
 public:
  // gamma, beta, mean and variance: contiguous float32 [K]; an error naming them otherwise.
  static Expected<std::shared_ptr<ChannelAffine>> Create(const at::Tensor& gamma, const at::Tensor& beta,
                                                         const at::Tensor& mean, const at::Tensor& variance,
                                                         double epsilon);
  void Update();
  const at::Tensor& scale() const { return scale_; }  // [K], after Update
  const at::Tensor& shift() const { return shift_; }

 private:
  at::Tensor gamma_, beta_, mean_, variance_, scale_, shift_;
  double epsilon_ = 0;
};

// The operands as ATen sees them: x and y NCHW tensors with channels-last strides; x_nchw and
// y_nchw plain NCHW scratch of their shapes (undefined: the "nchw" kernel is not offered);
// constant_weight: the weight is fixed for the model's lifetime (else it may change between
// calls and "onednn_repack" is offered); onednn: oneDNN's primitive for these shapes and
// strides (null: no oneDNN kernel is offered), shared by the task and its timing stand-ins;
// packed_weight: a constant weight in that primitive's layout.
struct ChannelsLastConv {
  at::Tensor x, weight, y;
  std::optional<at::Tensor> bias;
  ConvWindow window;
  at::Tensor x_nchw, y_nchw;
  bool constant_weight = false;
  std::shared_ptr<onednn::Conv2D> onednn;
  at::Tensor packed_weight;
  // For a weight that is an input under a batch norm: the primitive with a bias and no norm
  // post-ops, for the weight with the norm folded in ("onednn_folded"; null: not offered).
  std::shared_ptr<onednn::Conv2D> onednn_folded;
  // The two above made without the residual and activation post-ops, which AddResidualThenActivate
  // applies after them in one pass ("onednn_*_late"; null: not offered -- no residual, or one not
  // in y's layout), and a constant weight in the late primitive's layout: oneDNN 2.6 runs a
  // residual post-op only on its older direct kernels, not on brgconv.
  std::shared_ptr<onednn::Conv2D> onednn_late, onednn_folded_late;
  at::Tensor packed_weight_late;
  // The "few_pixels" kernel's geometry (unset: not offered) and a constant weight in its layout.
  std::optional<FewPixelGeometry> few_pixels;
  at::Tensor few_pixel_weight;
  // A FusedConv2D's epilogue: y = y * scale + shift per channel (null: none), y += residual (an
  // NCHW view of y's shape; undefined: none), then the activation (null: none).
  std::shared_ptr<ChannelAffine> affine;
  at::Tensor residual;
  const CpuEpilogue* activation = nullptr;
};

// Once, at load: makes conv.onednn where oneDNN takes these operands (float32, a dense bias) and
// conv.few_pixels where that kernel does, and, for a constant weight, its prepared copies
// (channels-last for ATen, blocked for oneDNN, packed for few_pixels). A convolution neither
// takes keeps the ATen kernels only.
Status PrepareChannelsLastConv(ChannelsLastConv& conv);

// A FusedConv2D's epilogue after an ATen convolution into y (NCHW order, any strides): the
// per-channel scale and shift (if any; updated here), y += residual (if defined), then the
// activation (if any), in place while y is warm.
void ApplyConvEpilogue(at::Tensor& y, ChannelAffine* affine, const at::Tensor& residual, const CpuEpilogue* activation);

std::vector<KernelCandidate> ChannelsLastConvCandidates(const ChannelsLastConv& conv);
// The kernels TORCHAIR_GE_CPU_CONV may force (ForcedKernelSetting).
std::vector<std::string> ForcibleConvKernels();
// The candidate `name` (one of those) runs; one `conv` does not offer leaves it to "nhwc", except
// a late kernel on a convolution without a residual in y's layout: its twin with the post-ops,
// which is the same kernel there.
std::function<void()> ForcedConvKernel(const ChannelsLastConv& conv, const std::string& name);

// The shapes, window and threads that decide which candidate is faster.
std::string ChannelsLastConvKey(const ChannelsLastConv& conv);

}  // namespace ge::cpu
