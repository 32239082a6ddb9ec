#include "devices/onednn/matmul.h"

#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "devices/onednn/dnnl_util.h"

namespace ge::onednn {
namespace {

using dnnl::memory;
using DT = memory::data_type;

memory::desc Strided(const Dims2x& sizes, const Dims2x& strides) {
  return {{sizes[0], sizes[1]}, DT::f32, {strides[0], strides[1]}};
}

std::string Describe(const MatMulSpec& s) {
  return fmt::format("x {} w {} (strides {}){}", s.x_sizes, s.w_sizes, s.w_strides, s.bias ? " +bias" : "");
}

}  // namespace

struct MatMul::Impl {
  MatMulSpec spec;
  dnnl::engine engine = CpuEngine();
  dnnl::stream stream{engine};
  dnnl::matmul primitive;
  memory::desc weight_desc;
  memory x, weight, bias, y;  // the caller's buffers, attached at each run
  std::unordered_map<int, memory> args;
  std::string implementation;
};

MatMul::MatMul(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MatMul::~MatMul() = default;

Expected<std::unique_ptr<MatMul>> MatMul::Create(const MatMulSpec& s) {
  if (s.x_sizes[1] != s.w_sizes[0]) return InvalidArgument("oneDNN MatMul: x and w disagree on k ({})", Describe(s));
  // oneDNN divides by these sizes while it plans (an empty batch stopped a process with SIGFPE).
  if (!AllPositive(s.x_sizes) || !AllPositive(s.w_sizes))
    return Unimplemented("oneDNN MatMul: an empty tensor ({})", Describe(s));
  // A zero stride (an expanded view) would have oneDNN write or read overlapping elements.
  if (!AllPositive(s.x_strides) || !AllPositive(s.w_strides) || !AllPositive(s.y_strides))
    return Unimplemented("oneDNN MatMul: a broadcast (zero-stride) operand ({})", Describe(s));
  auto impl = std::make_unique<Impl>();
  impl->spec = s;
  try {
    const Dims2x y_sizes{s.x_sizes[0], s.w_sizes[1]};
    const memory::desc x_desc = Strided(s.x_sizes, s.x_strides), y_desc = Strided(y_sizes, s.y_strides);
    const memory::desc w_desc = s.packed_weight
                                    ? memory::desc({s.w_sizes[0], s.w_sizes[1]}, DT::f32, memory::format_tag::any)
                                    : Strided(s.w_sizes, s.w_strides);
    const memory::desc bias_desc({1, s.w_sizes[1]}, DT::f32, memory::format_tag::ab);
    dnnl::post_ops post;
    AppendActivation(post, s.activation);
    dnnl::primitive_attr attr;
    attr.set_post_ops(post);
    const dnnl::matmul::desc desc(x_desc, w_desc, s.bias ? bias_desc : memory::desc(), y_desc);
    const dnnl::matmul::primitive_desc pd(desc, attr, impl->engine);
    impl->primitive = dnnl::matmul(pd);
    impl->implementation = pd.impl_info_str();
    impl->weight_desc = pd.weights_desc();
    impl->x = memory(x_desc, impl->engine, nullptr);
    impl->weight = memory(impl->weight_desc, impl->engine, nullptr);
    impl->y = memory(y_desc, impl->engine, nullptr);
    impl->args = {{DNNL_ARG_SRC, impl->x}, {DNNL_ARG_WEIGHTS, impl->weight}, {DNNL_ARG_DST, impl->y}};
    if (s.bias) {
      impl->bias = memory(bias_desc, impl->engine, nullptr);
      impl->args.insert({DNNL_ARG_BIAS, impl->bias});
    }
  } catch (const dnnl::error& e) {
    return Unimplemented("oneDNN has no matmul for {}: {}", Describe(s), e.what());
  }
  return std::unique_ptr<MatMul>(new MatMul(std::move(impl)));
}

size_t MatMul::PackedWeightBytes() const { return impl_->weight_desc.get_size(); }

Status MatMul::PackWeight(const float* weight, const Dims2x& strides, void* packed) {
  Impl& m = *impl_;
  try {
    memory plain(Strided(m.spec.w_sizes, strides), m.engine, const_cast<float*>(weight));
    memory blocked(m.weight_desc, m.engine, packed);
    dnnl::reorder(plain, blocked).execute(m.stream, plain, blocked);
    m.stream.wait();
  } catch (const dnnl::error& e) {
    return Internal("oneDNN MatMul ({}): packing the weight failed: {}", Describe(m.spec), e.what());
  }
  return {};
}

Status MatMul::Run(const float* x, const void* w, const float* bias, float* y) {
  Impl& m = *impl_;
  try {
    m.x.set_data_handle(const_cast<float*>(x));
    m.weight.set_data_handle(const_cast<void*>(w));
    m.y.set_data_handle(y);
    if (m.spec.bias) m.bias.set_data_handle(const_cast<float*>(bias));
    m.primitive.execute(m.stream, m.args);
    m.stream.wait();
  } catch (const dnnl::error& e) {
    return Internal("oneDNN MatMul ({}) failed: {}", Describe(m.spec), e.what());
  }
  return {};
}

const std::string& MatMul::Implementation() const { return impl_->implementation; }

}  // namespace ge::onednn
