#include "devices/onednn/matmul.h"

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
  BoundPrimitive primitive;
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
    const dnnl::matmul::primitive_desc pd(desc, attr, CpuEngine());
    BoundPrimitive& p = impl->primitive;
    p.Set(dnnl::matmul(pd), pd.weights_desc(), pd.impl_info_str(), [desc, attr]() {
      const dnnl::matmul::primitive_desc replanned(desc, attr, CpuEngine());
      return std::make_pair(dnnl::primitive(dnnl::matmul(replanned)), replanned.weights_desc());
    });
    p.AddArgument(DNNL_ARG_SRC, x_desc);
    p.AddArgument(DNNL_ARG_WEIGHTS, pd.weights_desc());
    p.AddArgument(DNNL_ARG_DST, y_desc);
    if (s.bias) p.AddArgument(DNNL_ARG_BIAS, bias_desc);
  } catch (const dnnl::error& e) {
    return Unimplemented("oneDNN has no matmul for {}: {}", Describe(s), e.what());
  }
  return std::unique_ptr<MatMul>(new MatMul(std::move(impl)));
}

size_t MatMul::PackedWeightBytes() const { return impl_->primitive.weights().get_size(); }

Status MatMul::PackWeight(const float* weight, const Dims2x& strides, void* packed) {
  const Status packing = impl_->primitive.Pack(Strided(impl_->spec.w_sizes, strides), weight, packed);
  return packing.ok() ? packing : packing.WithContext(fmt::format("MatMul ({})", Describe(impl_->spec)));
}

Status MatMul::Run(const float* x, const void* w, const float* bias, float* y) {
  const Status run =
      impl_->primitive.Run({{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, y}, {DNNL_ARG_BIAS, bias}});
  return run.ok() ? run : run.WithContext(fmt::format("MatMul ({})", Describe(impl_->spec)));
}

const std::string& MatMul::Implementation() const { return impl_->primitive.implementation(); }

}  // namespace ge::onednn
