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

void BoundPrimitive::Set(dnnl::primitive primitive, dnnl::memory::desc weights, std::string implementation) {
  primitive_ = std::move(primitive);
  weights_ = std::move(weights);
  implementation_ = std::move(implementation);
}

void BoundPrimitive::AddArgument(int arg, const dnnl::memory::desc& desc) {
  memories_.emplace_back(desc, CpuEngine(), nullptr);
  exec_args_.push_back({arg, memories_.back().get()});  // the C handle stays put when the vector grows
}

Status BoundPrimitive::Pack(const dnnl::memory::desc& plain, const void* weight, void* packed) {
  try {
    dnnl::memory from(plain, CpuEngine(), const_cast<void*>(weight)), to(weights_, CpuEngine(), packed);
    dnnl::reorder(from, to).execute(stream_, from, to);
    stream_.wait();
  } catch (const dnnl::error& e) {
    return Internal("oneDNN: packing a weight failed: {}", e.what());
  }
  return {};
}

Status BoundPrimitive::Run(std::initializer_list<std::pair<int, const void*>> buffers) {
  dnnl_status_t status = dnnl_success;
  for (const auto& [arg, data] : buffers)
    for (const dnnl_exec_arg_t& a : exec_args_)
      if (a.arg == arg && status == dnnl_success)
        status = dnnl_memory_set_data_handle(a.memory, const_cast<void*>(data));
  if (status == dnnl_success)
    status =
        dnnl_primitive_execute(primitive_.get(), stream_.get(), static_cast<int>(exec_args_.size()), exec_args_.data());
  if (status == dnnl_success) status = dnnl_stream_wait(stream_.get());
  if (status != dnnl_success)
    return Internal("oneDNN: running {} failed (status {})", implementation_, static_cast<int>(status));
  return {};
}

std::string Version() {
  const dnnl_version_t* v = dnnl_version();
  return fmt::format("{}.{}.{}", v->major, v->minor, v->patch);
}

}  // namespace ge::onednn
