#include "devices/onednn/conv2d.h"

#include "devices/onednn/dnnl_util.h"

#include <unordered_map>
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

}  // namespace

struct Conv2D::Impl {
  Conv2DSpec spec;
  dnnl::engine engine = CpuEngine();
  dnnl::stream stream{engine};
  dnnl::convolution_forward primitive;
  memory::desc weight_desc;             // the primitive's (blocked) layout
  memory x, weight, bias, residual, y;  // the caller's buffers, attached at each run
  std::unordered_map<int, memory> args;
  std::string implementation;
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
    const dnnl::convolution_forward::primitive_desc pd(desc, attr, impl->engine);
    impl->primitive = dnnl::convolution_forward(pd);
    impl->implementation = pd.impl_info_str();
    impl->weight_desc = pd.weights_desc();
    impl->weight = memory(impl->weight_desc, impl->engine, nullptr);
    impl->x = memory(x_desc, impl->engine, nullptr);
    impl->y = memory(y_desc, impl->engine, nullptr);
    impl->args = {{DNNL_ARG_SRC, impl->x}, {DNNL_ARG_WEIGHTS, impl->weight}, {DNNL_ARG_DST, impl->y}};
    if (s.bias) {
      impl->bias = memory(bias_desc, impl->engine, nullptr);
      impl->args.insert({DNNL_ARG_BIAS, impl->bias});
    }
    if (s.residual) {
      impl->residual = memory(residual_desc, impl->engine, nullptr);
      impl->args.insert({DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, impl->residual});
    }
  } catch (const dnnl::error& e) {
    return Unimplemented("oneDNN has no convolution for {}: {}", Describe(s), e.what());
  }
  return std::unique_ptr<Conv2D>(new Conv2D(std::move(impl)));
}

size_t Conv2D::PackedWeightBytes() const { return impl_->weight_desc.get_size(); }

Status Conv2D::PackWeight(const float* weight, const Dims4& strides, void* packed) {
  Impl& m = *impl_;
  try {
    memory plain({WeightDims(m.spec), DT::f32, WeightStrides(m.spec, strides)}, m.engine, const_cast<float*>(weight));
    memory blocked(m.weight_desc, m.engine, packed);
    dnnl::reorder(plain, blocked).execute(m.stream, plain, blocked);
    m.stream.wait();
  } catch (const dnnl::error& e) {
    return Internal("oneDNN Conv2D ({}): packing the weight failed: {}", Describe(m.spec), e.what());
  }
  return {};
}

Status Conv2D::Run(const float* x, const void* packed, const float* bias, const float* residual, float* y) {
  Impl& m = *impl_;
  try {
    m.x.set_data_handle(const_cast<float*>(x));
    m.weight.set_data_handle(const_cast<void*>(packed));
    m.y.set_data_handle(y);
    if (m.spec.bias) m.bias.set_data_handle(const_cast<float*>(bias));
    if (m.spec.residual) m.residual.set_data_handle(const_cast<float*>(residual));
    m.primitive.execute(m.stream, m.args);
    m.stream.wait();
  } catch (const dnnl::error& e) {
    return Internal("oneDNN Conv2D ({}) failed: {}", Describe(m.spec), e.what());
  }
  return {};
}

const std::string& Conv2D::Implementation() const { return impl_->implementation; }

}  // namespace ge::onednn
