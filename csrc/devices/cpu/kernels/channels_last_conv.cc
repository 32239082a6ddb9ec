#include "devices/cpu/kernels/channels_last_conv.h"

#include <atomic>
#include <cstring>
#include <memory>

#include <ATen/Parallel.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/empty_strided.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "devices/cpu/kernels/onednn_ops.h"

namespace ge::cpu {
namespace {

using ConvFn = at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, at::IntArrayRef,
                          at::IntArrayRef, at::IntArrayRef, int64_t, std::string_view,
                          c10::List<std::optional<at::Scalar>>, std::optional<std::string_view>);
using ReorderFn = at::Tensor(const at::Tensor&, at::IntArrayRef, at::IntArrayRef, at::IntArrayRef, int64_t,
                             at::OptionalIntArrayRef);

const std::optional<c10::TypedOperatorHandle<ConvFn>>& ConvOp() {
  static const auto op = FindOneDnnOp<ConvFn>("mkldnn::_convolution_pointwise");
  return op;
}

const std::optional<c10::TypedOperatorHandle<ReorderFn>>& ReorderOp() {
  static const auto op = FindOneDnnOp<ReorderFn>("mkldnn::_reorder_convolution_weight");
  return op;
}

void Convolve(at::Tensor& y, const at::Tensor& x, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
              const ConvWindow& c) {
  at::convolution_out(y, x, weight, bias, c.stride, c.padding, c.dilation, /*transposed=*/false,
                      /*output_padding=*/{0, 0}, c.groups);
}

// oneDNN's convolution on a prepacked weight; it allocates its output (no out= form), which is
// copied into y (same channels-last strides: a plain copy).
void ConvolvePacked(at::Tensor& y, const at::Tensor& x, const at::Tensor& packed, const std::optional<at::Tensor>& bias,
                    const ConvWindow& c) {
  static const c10::List<std::optional<at::Scalar>> no_scalars;
  y.copy_(ConvOp()->call(x, packed, bias, c.padding, c.stride, c.dilation, c.groups, "none", no_scalars, std::nullopt));
}

// Whether two buffers of n bytes hold the same bytes, compared on the intra-op threads.
bool SameBytes(const void* a, const void* b, int64_t n) {
  constexpr int64_t kGrain = int64_t{1} << 20;
  std::atomic<bool> same{true};
  at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
    if (same.load(std::memory_order_relaxed) &&
        std::memcmp(static_cast<const char*>(a) + begin, static_cast<const char*>(b) + begin, end - begin) != 0)
      same.store(false, std::memory_order_relaxed);
  });
  return same.load();
}

// A weight that is a graph input (not frozen), packed for oneDNN again only when its bytes
// changed. Every call compares the weight with the bytes it was last packed from; content, not
// a version counter, decides, because writes through `p.data` move no counter. The comparison
// reads the weight and its snapshot where ATen's per-call reorder reads and writes the weight in
// a slow kernel: on the Zen 3 a 512x512x3x3 weight compares in 1.7 ms and reorders in 6.6 ms.
// The price is memory: the snapshot and the packing, two more copies of the weight.
class RepackOnChange {
 public:
  RepackOnChange(at::Tensor weight, ConvWindow window, at::IntArrayRef x_sizes)
      : weight_(std::move(weight)), window_(std::move(window)), x_sizes_(x_sizes.vec()) {}

  const at::Tensor& Packed() {
    const bool unchanged =
        packed_.defined() && SameBytes(weight_.const_data_ptr(), snapshot_.const_data_ptr(), weight_.nbytes());
    if (!unchanged) {
      if (!snapshot_.defined()) snapshot_ = at::empty_strided(weight_.sizes(), weight_.strides(), weight_.options());
      snapshot_.copy_(weight_);
      packed_ = PackConvWeightForOneDnn(snapshot_, window_, x_sizes_);
    }
    return packed_;
  }

 private:
  at::Tensor weight_, snapshot_, packed_;
  ConvWindow window_;
  std::vector<int64_t> x_sizes_;
};

bool Repackable(const at::Tensor& weight) {
  return ConvOp() && weight.scalar_type() == at::kFloat && weight.dim() == 4 && weight.is_non_overlapping_and_dense();
}

}  // namespace

at::Tensor PackConvWeightForOneDnn(const at::Tensor& weight, const ConvWindow& window, at::IntArrayRef x_sizes) {
  if (!ConvOp() || !ReorderOp() || weight.scalar_type() != at::kFloat || weight.dim() != 4) return {};
  return ReorderOp()->call(weight.contiguous(), window.padding, window.stride, window.dilation, window.groups, x_sizes);
}

std::vector<KernelCandidate> ChannelsLastConvCandidates(const ChannelsLastConv& conv) {
  std::vector<KernelCandidate> out{{"nhwc", [c = conv]() mutable { Convolve(c.y, c.x, c.weight, c.bias, c.window); }}};
  if (conv.x_nchw.defined() && conv.y_nchw.defined())
    out.push_back({"nchw", [c = conv]() mutable {
                     c.x_nchw.copy_(c.x);
                     Convolve(c.y_nchw, c.x_nchw, c.weight, c.bias, c.window);
                     c.y.copy_(c.y_nchw);
                   }});
  if (conv.packed_weight.defined())
    out.push_back({"onednn_packed", [y = conv.y, x = conv.x, w = conv.packed_weight, b = conv.bias,
                                     c = conv.window]() mutable { ConvolvePacked(y, x, w, b, c); }});
  if (conv.weight_is_input && Repackable(conv.weight))
    out.push_back(
        {"onednn_repack",
         [y = conv.y, x = conv.x, r = std::make_shared<RepackOnChange>(conv.weight, conv.window, conv.x.sizes()),
          b = conv.bias, c = conv.window]() mutable { ConvolvePacked(y, x, r->Packed(), b, c); }});
  return out;
}

std::vector<std::string> ForcibleConvKernels() { return {"nhwc", "nchw", "onednn_packed", "onednn_repack"}; }

std::string ChannelsLastConvKey(const ChannelsLastConv& conv, bool constant_weight) {
  return fmt::format("Conv2D NHWC {} x{} w{} stride{} pad{} dilation{} groups={}{}{} threads={}",
                     c10::toString(conv.x.scalar_type()), conv.x.sizes(), conv.weight.sizes(), conv.window.stride,
                     conv.window.padding, conv.window.dilation, conv.window.groups, conv.bias ? " +bias" : "",
                     constant_weight ? " const-weight" : "", at::get_num_threads());
}

}  // namespace ge::cpu
