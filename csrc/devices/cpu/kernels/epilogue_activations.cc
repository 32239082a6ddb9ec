#include "devices/cpu/kernels/epilogue_activations.h"

#include <ATen/Parallel.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/tanh.h>

#include "devices/cpu/kernels/isa_dispatch.h"

namespace ge::cpu {
namespace {

// torch's ReLU of one float: x < 0 gives +0, anything else (NaN, -0.0) itself -- the same bits as
// eager's clamp_min. A loop of these compiles to a compare and a blend per vector.
inline void ReluRange(float* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = y[i] < 0.f ? 0.f : y[i];
}

__attribute__((target("avx512f"))) void ReluAvx512(float* y, int64_t n) { ReluRange(y, n); }
__attribute__((target("avx2,fma"))) void ReluAvx2(float* y, int64_t n) { ReluRange(y, n); }
void ReluPortable(float* y, int64_t n) { ReluRange(y, n); }

// y += r, then torch's ReLU of the sum if `relu`: the same two roundings as eager's add and relu.
template <bool kRelu>
inline void AddRange(float* __restrict y, const float* __restrict r, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = y[i] + r[i];
    y[i] = kRelu && v < 0.f ? 0.f : v;
  }
}

template <bool kRelu>
__attribute__((target("avx512f"))) void AddAvx512(float* y, const float* r, int64_t n) {
  AddRange<kRelu>(y, r, n);
}
template <bool kRelu>
__attribute__((target("avx2,fma"))) void AddAvx2(float* y, const float* r, int64_t n) {
  AddRange<kRelu>(y, r, n);
}
template <bool kRelu>
void AddPortable(float* y, const float* r, int64_t n) {
  AddRange<kRelu>(y, r, n);
}

// Elements per thread's chunk: eager's relu_ (at::internal::GRAIN_SIZE, TensorIterator.h).
constexpr int64_t kEagerGrain = 32768;

// Runs `range` over n elements in chunks of eager's grain on the intra-op threads (one call when
// that is a single chunk).
template <class Range>
void OverChunks(int64_t n, const Range& range) {
  if (n <= kEagerGrain) {
    range(0, n);
    return;
  }
  at::parallel_for(0, n, kEagerGrain, range);
}

// ReLU in place after a product or convolution: a dense float32 output is one vector loop
// (threads over chunks of eager's grain). at::relu_ in a run cost 10-12 us after a 64 x 256 x 256
// product (its dispatch and TensorIterator set-up, cold between the run's other kernels; 1.5 us
// hot), the loop 3-4. Anything else is at::relu_.
void ReluInPlace(at::Tensor& y) {
  // Any dense layout is one run of numel() floats from data_ptr() (a convolution's NHWC output
  // is not contiguous() as NCHW).
  if (y.scalar_type() != at::kFloat || !y.is_non_overlapping_and_dense()) {
    at::relu_(y);
    return;
  }
  using RangeFn = void (*)(float*, int64_t);
  static const RangeFn relu = ForThisCpu<RangeFn>(&ReluAvx512, &ReluAvx2, &ReluPortable);
  float* data = y.data_ptr<float>();
  OverChunks(y.numel(), [&](int64_t begin, int64_t end) { relu(data + begin, end - begin); });
}

}  // namespace

const CpuEpilogue* FindCpuEpilogue(EpilogueActivation activation) {
  static const CpuEpilogue kTable[] = {
      // No oneDNN post-op for ReLU: oneDNN's turns NaN into 0 (a max with 0 that returns the 0
      // when the value is NaN), torch's propagates it -- the engine's primitives leave it to
      // apply_in_place after them (a pass over the output: ReluInPlace).
      {EpilogueActivation::kRelu, &ReluInPlace, onednn::Activation::kNone},
      {EpilogueActivation::kGelu, [](at::Tensor& y) { at::gelu_out(y, y, "none"); }, onednn::Activation::kGeluErf},
      {EpilogueActivation::kGeluTanh, [](at::Tensor& y) { at::gelu_out(y, y, "tanh"); }, onednn::Activation::kGeluTanh},
      {EpilogueActivation::kSigmoid, [](at::Tensor& y) { at::sigmoid_out(y, y); }, onednn::Activation::kSigmoid},
      {EpilogueActivation::kTanh, [](at::Tensor& y) { at::tanh_out(y, y); }, onednn::Activation::kTanh},
      {EpilogueActivation::kSilu, [](at::Tensor& y) { at::silu_out(y, y); }, onednn::Activation::kSilu},
  };
  for (const CpuEpilogue& row : kTable)
    if (row.activation == activation) return &row;
  return nullptr;
}

void FinishAfterPrimitive(const CpuEpilogue* epilogue, at::Tensor& y) {
  if (epilogue != nullptr && epilogue->primitive_post_op == onednn::Activation::kNone) epilogue->apply_in_place(y);
}

void AddResidualThenActivate(const CpuEpilogue* epilogue, const at::Tensor& residual, at::Tensor& y) {
  const bool one_pass = y.scalar_type() == at::kFloat && residual.scalar_type() == at::kFloat &&
                        y.is_non_overlapping_and_dense() && y.sizes() == residual.sizes() &&
                        y.strides() == residual.strides() && residual.const_data_ptr() != y.const_data_ptr();
  if (!one_pass) {  // (or the two share a buffer: the loops' pointers are restrict)
    y.add_(residual);
    if (epilogue != nullptr) epilogue->apply_in_place(y);
    return;
  }
  using AddFn = void (*)(float*, const float*, int64_t);
  static const AddFn add = ForThisCpu<AddFn>(&AddAvx512<false>, &AddAvx2<false>, &AddPortable<false>);
  static const AddFn add_relu = ForThisCpu<AddFn>(&AddAvx512<true>, &AddAvx2<true>, &AddPortable<true>);
  const bool relu = epilogue != nullptr && epilogue->activation == EpilogueActivation::kRelu;
  float* out = y.data_ptr<float>();
  const float* r = residual.const_data_ptr<float>();
  OverChunks(y.numel(),
             [&](int64_t begin, int64_t end) { (relu ? add_relu : add)(out + begin, r + begin, end - begin); });
  if (epilogue != nullptr && !relu) epilogue->apply_in_place(y);
}

}  // namespace ge::cpu
