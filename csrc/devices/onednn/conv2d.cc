#include "devices/onednn/conv2d.h"

#include "devices/onednn/dnnl_util.h"

#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ge::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using DT = memory::data_type;

memory::desc Strided(const Dims4& sizes, const Dims4& strides) {
  return {memory::dims(sizes.begin(), sizes.end()), DT::f32, memory::dims(strides.begin(), strides.end())};
}

// The weight as oneDNN takes it: [K, C, KH, KW], or with groups [G, K/G, C/G, KH, KW].
memory::dims WeightDims(const Conv2DSpec& s) {
  if (s.groups == 1) return {s.w_sizes[0], s.w_sizes[1], s.w_sizes[2], s.w_sizes[3]};
  return {s.groups, s.w_sizes[0] / s.groups, s.w_sizes[1], s.w_sizes[2], s.w_sizes[3]};
}

memory::dims WeightStrides(const Conv2DSpec& s, const Dims4& strides) {
  if (s.groups == 1) return {strides[0], strides[1], strides[2], strides[3]};
  return {strides[0] * (s.w_sizes[0] / s.groups), strides[0], strides[1], strides[2], strides[3]};
}

std::string Describe(const Conv2DSpec& s) {
  return fmt::format("x {} w {} y {} stride {} padding {} dilation {} groups {}", s.x_sizes, s.w_sizes, s.y_sizes,
                     s.stride, s.padding, s.dilation, s.groups);
}

// The buffers of the post-ops, in their order: [scale, shift] [residual] [activation]. A post-op
// the spec does not have gets an argument id no primitive has, so its buffer is ignored.
constexpr int kNoArgument = -1;

int PostOpSource(int index) { return DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1; }
int ScaleArgument(const Conv2DSpec& s) { return s.channel_affine ? PostOpSource(0) : kNoArgument; }
int ShiftArgument(const Conv2DSpec& s) { return s.channel_affine ? PostOpSource(1) : kNoArgument; }
int ResidualArgument(const Conv2DSpec& s) { return s.residual ? PostOpSource(s.channel_affine ? 2 : 0) : kNoArgument; }

}  // namespace

struct Conv2D::Impl {
  Conv2DSpec spec;
  BoundPrimitive primitive;
};

Conv2D::Conv2D(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Conv2D::~Conv2D() = default;

Expected<std::unique_ptr<Conv2D>> Conv2D::Create(const Conv2DSpec& s) {
  if (s.groups < 1 || s.w_sizes[0] % s.groups != 0 || s.x_sizes[1] != s.w_sizes[1] * s.groups)
    return InvalidArgument("oneDNN Conv2D: channels do not match groups ({})", Describe(s));
  // oneDNN divides by these sizes while it plans (an empty batch stopped a process with SIGFPE).
  if (!AllPositive(s.x_sizes) || !AllPositive(s.w_sizes) || !AllPositive(s.y_sizes))
    return Unimplemented("oneDNN Conv2D: an empty tensor ({})", Describe(s));
  // A zero stride (an expanded view) would have oneDNN write or read overlapping elements.
  if (!AllPositive(s.x_strides) || !AllPositive(s.y_strides) || (s.residual && !AllPositive(s.residual_strides)))
    return Unimplemented("oneDNN Conv2D: a broadcast (zero-stride) operand ({})", Describe(s));
  auto impl = std::make_unique<Impl>();
  impl->spec = s;
  try {
    const memory::desc x_desc = Strided(s.x_sizes, s.x_strides), y_desc = Strided(s.y_sizes, s.y_strides);
    const memory::desc any_weight(WeightDims(s), DT::f32, Tag::any);
    const memory::desc bias_desc({s.w_sizes[0]}, DT::f32, Tag::x);
    dnnl::post_ops post;
    const memory::desc per_channel({1, s.w_sizes[0], 1, 1}, DT::f32, Tag::abcd);
    if (s.channel_affine) {
      post.append_binary(dnnl::algorithm::binary_mul, per_channel);
      post.append_binary(dnnl::algorithm::binary_add, per_channel);
    }
    const memory::desc residual_desc = Strided(s.y_sizes, s.residual_strides);
    if (s.residual) post.append_binary(dnnl::algorithm::binary_add, residual_desc);
    AppendActivation(post, s.activation);
    dnnl::primitive_attr attr;
    attr.set_post_ops(post);
    // oneDNN counts dilation from 0 (no gap) where torch counts from 1.
    const memory::dims stride{s.stride[0], s.stride[1]}, padding{s.padding[0], s.padding[1]},
        dilation{s.dilation[0] - 1, s.dilation[1] - 1};
    const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                               x_desc, any_weight, s.bias ? bias_desc : memory::desc(), y_desc, stride,
                                               dilation, padding, padding);
    const dnnl::convolution_forward::primitive_desc pd(desc, attr, CpuEngine());
    BoundPrimitive& p = impl->primitive;
    p.Set(dnnl::convolution_forward(pd), pd.weights_desc(), pd.impl_info_str(), [desc, attr]() {
      const dnnl::convolution_forward::primitive_desc replanned(desc, attr, CpuEngine());
      return std::make_pair(dnnl::primitive(dnnl::convolution_forward(replanned)), replanned.weights_desc());
    });
    p.AddArgument(DNNL_ARG_SRC, x_desc);
    p.AddArgument(DNNL_ARG_WEIGHTS, pd.weights_desc());
    p.AddArgument(DNNL_ARG_DST, y_desc);
    if (s.bias) p.AddArgument(DNNL_ARG_BIAS, bias_desc);
    if (s.channel_affine) {
      p.AddArgument(ScaleArgument(s), per_channel);
      p.AddArgument(ShiftArgument(s), per_channel);
    }
    if (s.residual) p.AddArgument(ResidualArgument(s), residual_desc);
  } catch (const dnnl::error& e) {
    return Unimplemented("oneDNN has no convolution for {}: {}", Describe(s), e.what());
  }
  return std::unique_ptr<Conv2D>(new Conv2D(std::move(impl)));
}

size_t Conv2D::PackedWeightBytes() const { return impl_->primitive.weights().get_size(); }

Status Conv2D::PackWeight(const float* weight, const Dims4& strides, void* packed) {
  const Conv2DSpec& s = impl_->spec;
  const Status packing = impl_->primitive.Pack({WeightDims(s), DT::f32, WeightStrides(s, strides)}, weight, packed);
  return packing.ok() ? packing : packing.WithContext(fmt::format("Conv2D ({})", Describe(s)));
}

Status Conv2D::Run(const Conv2DBuffers& b) {
  const Conv2DSpec& s = impl_->spec;
  const Status run = impl_->primitive.Run({{DNNL_ARG_SRC, b.x},
                                           {DNNL_ARG_WEIGHTS, b.packed_weight},
                                           {DNNL_ARG_DST, b.y},
                                           {DNNL_ARG_BIAS, b.bias},
                                           {ScaleArgument(s), b.scale},
                                           {ShiftArgument(s), b.shift},
                                           {ResidualArgument(s), b.residual}});
  return run.ok() ? run : run.WithContext(fmt::format("Conv2D ({})", Describe(s)));
}

const std::string& Conv2D::Implementation() const { return impl_->primitive.implementation(); }

}  // namespace ge::onednn
