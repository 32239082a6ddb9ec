// A Conv2D with data_format NHWC (the ChannelsLast pass) runs one of four kernels, whichever
// measured faster for its shapes on this CPU (kernel_choice.h):
//   "nhwc": ATen's convolution on the channels-last bytes as they are -- oneDNN without
//     reordering the activations; a weight that is not a constant is copied to channels-last by
//     ATen on every call (a constant one is copied once, at load);
//   "nchw": an NCHW copy of x, the plain convolution, and y copied back to NHWC (the copies are
//     the task's workspaces);
//   "onednn_packed", for a constant weight only (frozen parameters, folded BatchNorm): oneDNN's
//     convolution with the weight reordered into its blocked layout once, at load;
//   "onednn_repack", for a weight that is a graph input: the same, with the weight packed again
//     whenever its bytes differ from those it was last packed from (compared on every call).
// Of ATen's two, the first wins where activations are large against the weight (ResNet's early
// layers, ~30% per convolution on an AMD EPYC Zen 3), the second where the weight is (512
// channels at 4x4: the per-call weight copy costs more than the layout saves) and for a
// 3-channel stem. The oneDNN ones do no per-call weight reorder: ATen reorders every weight
// into oneDNN's layout on every call, which was half of a batch-1 ResNet-18's time on the Zen 3
// (13 of 27 ms).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <vector>

#include "devices/cpu/kernels/filter_gradient.h"
#include "devices/cpu/kernels/kernel_choice.h"

namespace ge::cpu {

// The operands as ATen sees them: x and y NCHW tensors with channels-last strides; x_nchw and
// y_nchw plain NCHW scratch of their shapes (undefined: the "nchw" kernel is not offered);
// packed_weight the weight in oneDNN's layout (undefined: "onednn_packed" is not offered);
// weight_is_input: the weight may change between calls ("onednn_repack" is offered).
struct ChannelsLastConv {
  at::Tensor x, weight, y;
  std::optional<at::Tensor> bias;
  ConvWindow window;
  at::Tensor x_nchw, y_nchw;
  at::Tensor packed_weight;
  bool weight_is_input = false;
};

// A constant weight reordered into oneDNN's layout for convolving inputs of x_sizes with
// `window`, or an undefined tensor where libtorch has no oneDNN or the dtype is not float32.
at::Tensor PackConvWeightForOneDnn(const at::Tensor& weight, const ConvWindow& window, at::IntArrayRef x_sizes);

std::vector<KernelCandidate> ChannelsLastConvCandidates(const ChannelsLastConv& conv);
// The kernels TORCHAIR_GE_CPU_CONV may force (ForcedKernelSetting).
std::vector<std::string> ForcibleConvKernels();

// The shapes, window and threads that decide which candidate is faster.
std::string ChannelsLastConvKey(const ChannelsLastConv& conv, bool constant_weight);

}  // namespace ge::cpu
