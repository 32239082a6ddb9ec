#include "devices/onednn/dnnl_util.h"

#include <utility>

#include <fmt/format.h>

namespace ge::onednn {
namespace {

// oneDNN's eltwise algorithm for `a` and its alpha (swish is x * sigmoid(alpha x)).
std::pair<dnnl::algorithm, float> EltwiseOf(Activation a) {
  switch (a) {
    case Activation::kRelu: return {dnnl::algorithm::eltwise_relu, 0.f};
    case Activation::kGeluErf: return {dnnl::algorithm::eltwise_gelu_erf, 0.f};
    case Activation::kGeluTanh: return {dnnl::algorithm::eltwise_gelu_tanh, 0.f};
    case Activation::kSigmoid: return {dnnl::algorithm::eltwise_logistic, 0.f};
    case Activation::kTanh: return {dnnl::algorithm::eltwise_tanh, 0.f};
    case Activation::kSilu: return {dnnl::algorithm::eltwise_swish, 1.f};
    case Activation::kNone: break;
  }
  return {dnnl::algorithm::undef, 0.f};
}

}  // namespace

const dnnl::engine& CpuEngine() {
  static const dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);  // never destroyed: used at exit
  return *engine;
}

void AppendActivation(dnnl::post_ops& post, Activation activation) {
  if (activation == Activation::kNone) return;
  const auto [algorithm, alpha] = EltwiseOf(activation);
  post.append_eltwise(1.f, algorithm, alpha, 0.f);
}

std::string Version() {
  const dnnl_version_t* v = dnnl_version();
  return fmt::format("{}.{}.{}", v->major, v->minor, v->patch);
}

}  // namespace ge::onednn
