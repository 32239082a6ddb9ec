#include "devices/onednn/dnnl_util.h"

#include <dlfcn.h>

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

// The calling thread's OpenMP thread setting (what oneDNN plans a primitive for), through the
// OpenMP runtime torch loaded (looked up, not linked: never a second runtime); 0 when there is
// none.
int ThreadSetting() {
  static const auto get = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  return get != nullptr ? get() : 0;
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

void BoundPrimitive::Set(dnnl::primitive primitive, dnnl::memory::desc weights, std::string implementation,
                         Replan replan) {
  primitive_ = std::move(primitive);
  weights_ = std::move(weights);
  implementation_ = std::move(implementation);
  threads_ = ThreadSetting();
  replan_ = std::move(replan);
}

dnnl_primitive_t BoundPrimitive::ForThreads(int threads) {
  if (threads == threads_ || threads_ == 0 || threads <= 0) return primitive_.get();
  for (const auto& [setting, primitive] : replanned_)
    if (setting == threads) return primitive.get();
  dnnl::primitive made = primitive_;  // kept when planning again fails or changes the weights' layout
  try {
    auto [primitive, weights] = replan_();
    if (weights == weights_) made = std::move(primitive);
  } catch (const dnnl::error&) {
  }
  replanned_.emplace_back(threads, std::move(made));  // (allocates: once per setting)
  return replanned_.back().second.get();
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
    status = dnnl_primitive_execute(ForThreads(ThreadSetting()), stream_.get(), static_cast<int>(exec_args_.size()),
                                    exec_args_.data());
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
