// y = act(x1 · x2 + bias) in float32 through the engine's oneDNN matmul primitive
// (devices/onednn/matmul.h) instead of at::mm/addmm.
//
// Why: ATen's float32 mm goes to MKL's sgemm, which on AMD CPUs runs its AVX2 code path;
// oneDNN's JIT kernels use AVX-512 wherever the CPU has it. On the 2-core bench machine
// (AMD EPYC, AVX-512) oneDNN measured 2.0-2.5x faster from 64x512x512 up (bert's and llama's
// projections) and ~3x on a decode step's matrix-vector products; on an Intel Xeon MKL keeps
// up. Which one runs is decided per shape by measurement (kernel_choice.h, math_kernels.cc);
// both give eager-level float32 numerics (no reduced-precision math mode). The primitive is
// made once, at load, and writes into the task's output: ATen's oneDNN linear operator looked
// its primitive up and allocated an output on every call (~12 us, then a copy), which lost on
// small products. A constant weight (frozen parameters, folded constants) is packed once into
// oneDNN's layout for the task's row count; a weight that is an input is read in place.
#include "devices/cpu/kernels/onednn_linear.h"

#include <ATen/ops/empty.h>

#include <memory>
#include <vector>

#include "devices/cpu/kernels/transpose_rows.h"
#include "ge/base/logging.h"

namespace ge::cpu {
namespace {

onednn::Dims2x Dims(at::IntArrayRef v) { return {v[0], v[1]}; }

// yᵀ of a transposed product, on the thread that runs it: one buffer per thread, as large as the
// largest yᵀ it has held (as flash_attention_impl.h keeps its tiles). Not one per kernel: that
// would keep a copy of every such product's output alive beside the arena (a 7B-parameter
// LLaMA's 224 products at 256 rows: ~1.4 GB). Tasks of one stream run one after another on its
// thread; streams and concurrent runs of a graph are on threads of their own.
float* TransposedScratch(size_t floats) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < floats) buffer.resize(floats);
  return buffer.data();
}

}  // namespace

std::optional<OneDnnProduct> PrepareOneDnnProduct(const at::Tensor& x1, const at::Tensor& x2, const at::Tensor& bias,
                                                  bool x2_is_constant, const CpuEpilogue* activation,
                                                  const at::Tensor& y) {
  const bool f32 = x1.scalar_type() == at::kFloat && x2.scalar_type() == at::kFloat && y.scalar_type() == at::kFloat;
  if (!f32 || x1.dim() != 2 || x2.dim() != 2 || y.dim() != 2) return std::nullopt;
  const int64_t n = x2.size(1);
  if (bias.defined() &&
      (bias.dim() != 1 || bias.size(0) != n || bias.scalar_type() != at::kFloat || !bias.is_contiguous()))
    return std::nullopt;
  onednn::MatMulSpec spec;
  spec.x_sizes = Dims(x1.sizes());
  spec.x_strides = Dims(x1.strides());
  spec.w_sizes = Dims(x2.sizes());
  spec.w_strides = Dims(x2.strides());
  spec.y_strides = Dims(y.strides());
  spec.bias = bias.defined();
  spec.packed_weight = x2_is_constant;
  if (activation != nullptr) spec.activation = activation->primitive_post_op;
  auto made = onednn::MatMul::Create(spec);
  if (!made.ok()) {
    GE_LOGD("no oneDNN kernel for a product: {}", made.status().message());
    return std::nullopt;
  }
  OneDnnProduct product{std::move(*made), {}, activation};
  if (x2_is_constant) {
    product.packed_weight =
        at::empty({static_cast<int64_t>(product.primitive->PackedWeightBytes())}, x2.options().dtype(at::kByte));
    const Status packing =
        product.primitive->PackWeight(x2.const_data_ptr<float>(), Dims(x2.strides()), product.packed_weight.data_ptr());
    if (!packing.ok()) {
      GE_LOGD("a product's weight was not packed for oneDNN: {}", packing.message());
      return std::nullopt;
    }
  }
  return product;
}

std::function<void()> OneDnnProductKernel(const OneDnnProduct& product, const at::Tensor& x1, const at::Tensor& x2,
                                          const at::Tensor& bias, const at::Tensor& y) {
  // The packed weight where there is one, else x2 read in place.
  const at::Tensor weight = product.packed_weight.defined() ? product.packed_weight : x2;
  return [mm = product.primitive, x1, weight, bias, activation = product.activation, y = at::Tensor(y)]() mutable {
    const Status run = mm->Run(x1.const_data_ptr<float>(), weight.const_data_ptr(),
                               bias.defined() ? bias.const_data_ptr<float>() : nullptr, y.data_ptr<float>());
    TORCH_CHECK(run.ok(), run.message());
    FinishAfterPrimitive(activation, y);
  };
}

std::optional<OneDnnTransposedProduct> PrepareOneDnnTransposedProduct(const at::Tensor& x1, const at::Tensor& x2,
                                                                      const at::Tensor& bias,
                                                                      const CpuEpilogue* activation,
                                                                      const at::Tensor& y) {
  const bool f32 = x1.scalar_type() == at::kFloat && x2.scalar_type() == at::kFloat && y.scalar_type() == at::kFloat;
  if (!f32 || x1.dim() != 2 || x2.dim() != 2 || y.dim() != 2 || x1.size(0) > kTransposedProductMaxRows ||
      x1.stride(1) != 1 || y.stride(1) != 1 || x2.stride(0) != 1 || x2.stride(1) < x2.size(0))
    return std::nullopt;
  if (bias.defined() &&
      (bias.dim() != 1 || bias.size(0) != x2.size(1) || bias.scalar_type() != at::kFloat || !bias.is_contiguous()))
    return std::nullopt;
  const int64_t m = x1.size(0), k = x1.size(1), n = x2.size(1);
  onednn::MatMulSpec spec;
  spec.x_sizes = {n, k};  // the weight, rows x2.stride(1) apart
  spec.x_strides = {x2.stride(1), 1};
  spec.w_sizes = {k, m};  // x1ᵀ
  spec.w_strides = {1, x1.stride(0)};
  spec.y_strides = {m, 1};
  // Without a bias the activation commutes with the transpose: oneDNN's post-op applies it (a
  // bias comes first, and oneDNN has no fast kernel for a bias per row of yᵀ).
  const bool post_op = activation != nullptr && !bias.defined();
  if (post_op) spec.activation = activation->primitive_post_op;
  auto made = onednn::MatMul::Create(spec);
  if (!made.ok()) {
    GE_LOGD("no transposed oneDNN kernel for a product: {}", made.status().message());
    return std::nullopt;
  }
  // oneDNN's reference kernel is thousands of times slower (0.5 s for 64 x 512 x 1408): not a candidate.
  if ((*made)->Implementation().rfind("ref", 0) == 0) return std::nullopt;
  return OneDnnTransposedProduct{std::move(*made), post_op};
}

std::function<void()> OneDnnTransposedProductKernel(const OneDnnTransposedProduct& product, const at::Tensor& x1,
                                                    const at::Tensor& x2, const at::Tensor& bias,
                                                    const CpuEpilogue* activation, const at::Tensor& y) {
  return [mm = product.primitive, post_op = product.activation_post_op, x1, x2, bias, activation,
          y = at::Tensor(y)]() mutable {
    const int64_t n = x2.size(1), m = x1.size(0);
    float* yt = TransposedScratch(static_cast<size_t>(n * m));
    const Status run = mm->Run(x2.const_data_ptr<float>(), x1.const_data_ptr<float>(), nullptr, yt);
    TORCH_CHECK(run.ok(), run.message());
    TransposeAddBias(yt, n, m, bias.defined() ? bias.const_data_ptr<float>() : nullptr, y.data_ptr<float>(),
                     y.stride(0));
    if (post_op)
      FinishAfterPrimitive(activation, y);
    else if (activation != nullptr)
      activation->apply_in_place(y);
  };
}

}  // namespace ge::cpu
