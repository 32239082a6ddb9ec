// Matrix products and reductions.
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/sum.h>
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "devices/cpu/kernel_registry.h"
#include "devices/cpu/kernels/epilogue_activations.h"
#include "devices/cpu/kernels/gemv.h"
#include "devices/cpu/kernels/kernel_choice.h"
#include "devices/cpu/kernels/onednn_linear.h"

namespace ge::cpu {
namespace {

// y = act(x1 · x2 + bias) through MKL's sgemm (at::mm/addmm), the activation applied in place
// while y is hot.
std::function<void()> AtenProduct(at::Tensor x1, at::Tensor x2, at::Tensor bias, const CpuEpilogue* activation,
                                  at::Tensor y) {
  void (*apply)(at::Tensor&) = activation ? activation->apply_in_place : [](at::Tensor&) {};
  return [x1, x2, bias, apply, y]() mutable {
    if (bias.defined())
      at::addmm_out(y, bias, x1, x2);
    else
      at::mm_out(y, x1, x2);
    apply(y);
  };
}

// y = act(x1 · x2 + bias) as one column block of y per intra-op thread, each block a
// single-threaded MKL product (inside a parallel region MKL does not start threads of its own).
// MKL's own threading splits a product of few rows badly: on an AMD EPYC Zen 3 with 2 threads
// the column split was 10-25% faster than at::addmm for 64-128 rows against 512-3072 columns
// (bert's, llama's and the MLP's projections), and slower for few columns; measurement decides.
// Blocks are whole multiples of 16 columns (SIMD width); nullopt with one thread or too few
// columns for two blocks.
std::optional<std::function<void()>> ColumnSplitProduct(at::Tensor x1, at::Tensor x2, at::Tensor bias,
                                                        const CpuEpilogue* activation, at::Tensor y) {
  constexpr int64_t kAlign = 16;
  const int64_t n = x2.size(1);
  const int64_t blocks = std::min<int64_t>(at::get_num_threads(), n / kAlign);
  if (blocks < 2 || y.dim() != 2 || (bias.defined() && bias.dim() > 2)) return std::nullopt;
  void (*apply)(at::Tensor&) = activation ? activation->apply_in_place : [](at::Tensor&) {};
  const int64_t per_block = (n / blocks + kAlign - 1) / kAlign * kAlign;
  // Each block's views of y, x2 and the bias, made once: the blocks are fixed.
  struct Block {
    at::Tensor y, x2, bias;
  };
  std::vector<Block> views;
  for (int64_t c0 = 0; c0 < n; c0 += per_block) {
    const int64_t width = std::min(per_block, n - c0);
    views.push_back({y.narrow(1, c0, width), x2.narrow(1, c0, width),
                     !bias.defined() || bias.size(-1) == 1 ? bias : bias.narrow(-1, c0, width)});
  }
  return [x1, views = std::move(views), apply]() mutable {
    // The blocks dispatch ATen ops on the pool's threads, which run them under this thread's
    // inference mode and dispatch keys (at compile time a candidate is timed on inference
    // tensors with the Python keys excluded). Not at::ThreadLocalState: it would also carry the
    // compiling frontend's Python dispatcher into the workers.
    const bool inference = c10::InferenceMode::is_enabled();
    const c10::impl::LocalDispatchKeySet keys = c10::impl::tls_local_dispatch_key_set();
    at::parallel_for(0, static_cast<int64_t>(views.size()), 1, [&](int64_t begin, int64_t end) {
      std::optional<c10::InferenceMode> mode;
      if (inference) mode.emplace();
      const c10::impl::ForceDispatchKeyGuard dispatch(keys);
      for (int64_t b = begin; b < end; ++b) {
        Block& block = views[static_cast<size_t>(b)];
        if (block.bias.defined())
          at::addmm_out(block.y, block.bias, x1, block.x2);
        else
          at::mm_out(block.y, x1, block.x2);
        apply(block.y);
      }
    });
  };
}

// A product's dim in its decision's key: the size, or in an instance of a graph whose sizes
// vary, its size class (the power-of-two range it lies in) so that the next instance's rows
// reuse the decision instead of timing every candidate again (~20 ms a shape). Which library
// wins changes slowly with the size; a few rows stay exact (weight-row streaming takes at most
// kGemvMaxRows rows).
std::string ProductDim(int64_t size, bool size_class) { return SizeInKey(size, size_class, kGemvMaxRows); }

// Names the shapes and options that decide which product kernel is faster.
std::string ProductKey(const KernelArgs& a, const at::Tensor& x1, const at::Tensor& x2, const at::Tensor& bias,
                       const CpuEpilogue* activation) {
  // (the threads too: the candidates' times depend on how many share a product)
  return fmt::format("{} {} {}x{}x{}{}{}{}{} threads={}", a.task.type, c10::toString(x1.scalar_type()),
                     ProductDim(x1.size(0), a.sizes_vary), ProductDim(x1.size(1), a.sizes_vary),
                     ProductDim(x2.size(1), a.sizes_vary), x2.stride(0) == 1 && x2.size(0) > 1 ? " x2^T" : "",
                     bias.defined() ? " +bias" : "",
                     activation ? fmt::format(" {}", EpilogueActivationName(activation->activation)) : "",
                     a.InputIsConstant(1) ? " const-weight" : "", at::get_num_threads());
}

// y = act(x1 · x2 + bias) by one of gemv.h's kernels over an nn.Linear weight (`run`: Gemv,
// weight-row streaming for a few rows of x1; FewColumns, every row of x1 dotted with a few weight
// rows at once), when x1 has contiguous float rows, x2 is the transpose of a contiguous [N, K]
// float weight and the bias, if any, is N contiguous floats.
std::optional<std::function<void()>> WeightRowsProduct(const at::Tensor& x1, const at::Tensor& x2,
                                                       const at::Tensor& bias, const CpuEpilogue* activation,
                                                       const at::Tensor& y, void (*run)(const GemvArgs&)) {
  const at::Tensor w = x2.t();
  const bool floats = x1.scalar_type() == at::kFloat && x2.scalar_type() == at::kFloat && y.scalar_type() == at::kFloat;
  if (!floats || x1.dim() != 2 || x1.stride(1) != 1 || !w.is_contiguous() || y.stride(1) != 1 ||
      (bias.defined() &&
       (bias.dim() != 1 || bias.size(0) != w.size(0) || !bias.is_contiguous() || bias.scalar_type() != at::kFloat)))
    return std::nullopt;
  void (*apply)(at::Tensor&) = activation ? activation->apply_in_place : [](at::Tensor&) {};
  return [x1, w, bias, apply, run, y = at::Tensor(y)]() mutable {
    run(GemvArgs{x1.const_data_ptr<float>(), x1.size(0), x1.stride(0), w.const_data_ptr<float>(), w.size(0), w.size(1),
                 bias.defined() ? bias.const_data_ptr<float>() : nullptr, y.data_ptr<float>(), y.stride(0)});
    apply(y);
  };
}

// A product's operands as its kernels see them: x1 and x2 transposed as the attrs say; onednn:
// the oneDNN primitive prepared once for these shapes (shared with the timing stand-ins).
struct ProductOperands {
  at::Tensor x1, x2, bias, y;
  bool transposed_x1 = false;
  std::optional<OneDnnProduct> onednn;
  std::optional<OneDnnTransposedProduct> transposed;  // oneDNN's, computing yᵀ
};

ProductOperands OperandsOf(const KernelArgs& a, bool t1, bool t2) {
  return ProductOperands{t1 ? a.inputs[0].t() : a.inputs[0],
                         t2 ? a.inputs[1].t() : a.inputs[1],
                         a.inputs.size() > 2 ? a.inputs[2] : at::Tensor(),
                         a.outputs[0],
                         t1,
                         std::nullopt,
                         std::nullopt};
}

// The operands of a product that outlive a run of its graph (x2, the weight; the bias; oneDNN's
// packed copy of a constant weight): what a kernel reads from memory, not from the cache, when
// its graph runs again (KernelCandidate::cold). x1 is the previous task's output, still cached.
std::vector<MemoryRange> WeightRanges(const ProductOperands& p) {
  return MemoryOf({p.x2, p.bias, p.onednn ? p.onednn->packed_weight : at::Tensor()});
}

// Every kernel that can compute this product, named.
std::vector<KernelCandidate> ProductCandidates(const ProductOperands& p, const CpuEpilogue* activation) {
  std::vector<KernelCandidate> out{{"mkl", AtenProduct(p.x1, p.x2, p.bias, activation, p.y)}};
  if (p.transposed_x1) return out;
  if (auto split = ColumnSplitProduct(p.x1, p.x2, p.bias, activation, p.y))
    out.push_back({"mkl_columns", std::move(*split)});
  if (p.onednn) out.push_back({"onednn", OneDnnProductKernel(*p.onednn, p.x1, p.x2, p.bias, p.y)});
  if (p.transposed)
    out.push_back(
        {"onednn_transposed", OneDnnTransposedProductKernel(*p.transposed, p.x1, p.x2, p.bias, activation, p.y)});
  if (p.x1.dim() == 2 && p.x1.size(0) <= kGemvMaxRows) {
    if (auto gemv = WeightRowsProduct(p.x1, p.x2, p.bias, activation, p.y, Gemv))
      out.push_back({"gemv", std::move(*gemv)});
    if (auto interleaved = WeightRowsProduct(p.x1, p.x2, p.bias, activation, p.y, GemvInterleaved))
      out.push_back({"gemv_interleaved", std::move(*interleaved)});
  }
  if (p.x2.dim() == 2 && p.x2.size(1) <= kFewColumnsMax)
    if (auto few = WeightRowsProduct(p.x1, p.x2, p.bias, activation, p.y, FewColumns))
      out.push_back({"few_columns", std::move(*few)});
  return out;
}

// MatMulV2 (no activation: null) and FusedMatMul: MKL (at::mm/addmm, whole or split in column
// blocks over the threads), oneDNN's matmul with the activation as a post-op, weight-row
// streaming for a few rows (one row at a time or eight side by side), or a few weight rows dotted
// with every row, whichever measured fastest for this shape on this CPU (or the one
// TORCHAIR_GE_CPU_MATMUL forces; where it does not apply, MKL runs).
Expected<std::unique_ptr<Kernel>> CreateProduct(KernelArgs& a, const CpuEpilogue* activation) {
  if (a.inputs.size() > 3 && a.inputs[3].defined())
    return Unimplemented("{} '{}': offset_w (int8) is not supported on CPU", a.task.type, a.task.name);
  GE_ASSIGN_OR_RETURN(const bool t1, a.Attr<bool>("transpose_x1"));
  GE_ASSIGN_OR_RETURN(const bool t2, a.Attr<bool>("transpose_x2"));
  ProductOperands p = OperandsOf(a, t1, t2);
  if (!t1) {
    p.onednn = PrepareOneDnnProduct(p.x1, p.x2, p.bias, a.InputIsConstant(1), activation, p.y);
    p.transposed = PrepareOneDnnTransposedProduct(p.x1, p.x2, p.bias, activation, p.y);
  }
  GE_ASSIGN_OR_RETURN(
      const std::string setting,
      ForcedKernelSetting("TORCHAIR_GE_CPU_MATMUL", {"mkl", "mkl_columns", "onednn", "onednn_transposed", "gemv",
                                                     "gemv_interleaved", "few_columns"}));
  std::vector<KernelCandidate> kernels = ProductCandidates(p, activation);
  if (setting != "measure") return MakeKernel(a.task, CandidateNamed(std::move(kernels), setting));
  auto timed = [&]() {
    ProductOperands scratch = OperandsOf(a.WithTimingOperands(), t1, t2);
    scratch.onednn = p.onednn;
    scratch.transposed = p.transposed;
    std::vector<KernelCandidate> candidates = ProductCandidates(scratch, activation);
    for (KernelCandidate& c : candidates) c.cold = WeightRanges(scratch);
    return candidates;
  };
  return MakeKernel(a.task,
                    FastestByMeasurement(ProductKey(a, p.x1, p.x2, p.bias, activation), std::move(kernels), timed));
}

Expected<std::unique_ptr<Kernel>> CreateMatMulV2(KernelArgs& a) { return CreateProduct(a, nullptr); }

Expected<std::unique_ptr<Kernel>> CreateFusedMatMul(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(std::string name, a.Attr<std::string>("fused_op_type"));
  const std::optional<EpilogueActivation> activation = EpilogueActivationNamed(name);
  const CpuEpilogue* body = activation ? FindCpuEpilogue(*activation) : nullptr;
  if (body == nullptr)
    return InvalidArgument("{} '{}': no CPU kernel for fused_op_type '{}'", a.task.type, a.task.name, name);
  return CreateProduct(a, body);
}

Expected<std::unique_ptr<Kernel>> CreateBatchMatMulV2(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(bool adj1, a.Attr<bool>("adj_x1"));
  GE_ASSIGN_OR_RETURN(bool adj2, a.Attr<bool>("adj_x2"));
  if (a.inputs.size() > 3 && a.inputs[3].defined())
    return Unimplemented("BatchMatMulV2 '{}': offset_w (int8) is not supported on CPU", a.task.name);
  at::Tensor x1 = adj1 ? a.inputs[0].transpose(-1, -2) : a.inputs[0];
  at::Tensor x2 = adj2 ? a.inputs[1].transpose(-1, -2) : a.inputs[1];
  at::Tensor bias = a.inputs[2];
  // Same 3-D batch on both sides: bmm straight into the output; otherwise matmul broadcasts.
  const bool plain_bmm = x1.dim() == 3 && x2.dim() == 3 && x1.size(0) == x2.size(0);
  return MakeKernel(a.task, [x1, x2, bias, plain_bmm, y = a.outputs[0]]() mutable {
    if (plain_bmm)
      at::bmm_out(y, x1, x2);
    else
      at::matmul_out(y, x1, x2);
    if (bias.defined()) y.add_(bias);
  });
}

template <bool kMean>
Expected<std::unique_ptr<Kernel>> CreateReduce(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(bool keep, a.Attr<bool>("keep_dims"));
  // The axes input is a constant (InferShape insists), bound at load like any other value.
  std::vector<int64_t> axes = ConstIntValues(a.inputs[1]);
  if (axes.empty())
    for (int64_t d = 0; d < a.inputs[0].dim(); ++d) axes.push_back(d);
  return MakeKernel(a.task, [axes, keep, x = a.inputs[0], y = a.outputs[0]]() mutable {
    if constexpr (kMean)
      at::mean_out(y, x, axes, keep);
    else
      at::sum_out(y, x, axes, keep);
  });
}

// The offsets are data (how many tokens each expert got), read in place at every run (int32 or
// int64, the IR's index types); each expert's weight view is made once, at load.
Expected<std::unique_ptr<Kernel>> CreateGroupedMatMul(KernelArgs& a) {
  const at::Tensor& offsets = a.inputs[2];
  if (offsets.dim() != 1 || !offsets.is_contiguous())
    return InvalidArgument("{} '{}': offsets must be a dense 1-D tensor", a.task.type, a.task.name);
  std::vector<at::Tensor> weights;
  for (int64_t g = 0; g < a.inputs[1].size(0); ++g) weights.push_back(a.inputs[1][g]);
  const bool int32 = offsets.scalar_type() == at::kInt;
  return MakeKernel(a.task, [x = a.inputs[0], weights, offsets, int32, y = a.outputs[0]]() mutable {
    const int64_t rows = x.size(0);
    int64_t start = 0;
    for (size_t g = 0; g < weights.size(); ++g) {
      const int64_t end = int32 ? offsets.const_data_ptr<int32_t>()[g] : offsets.const_data_ptr<int64_t>()[g];
      TORCH_CHECK(end >= start && end <= rows, "group offsets must be non-decreasing and at most ", rows, "; offset ",
                  g, " is ", end);
      if (end > start) {
        at::Tensor out = y.narrow(0, start, end - start);
        at::mm_out(out, x.narrow(0, start, end - start), weights[g]);
      }
      start = end;
    }
    if (start < rows) y.narrow(0, start, rows - start).zero_();
  });
}

}  // namespace

void RegisterMathKernels(CpuKernelRegistry& r) {
  r.Register("MatMulV2", CreateMatMulV2);
  r.Register("FusedMatMul", CreateFusedMatMul);
  r.Register("BatchMatMulV2", CreateBatchMatMulV2);
  r.Register("GroupedMatMul", CreateGroupedMatMul);
  r.Register("ReduceSum", CreateReduce<false>);
  r.Register("ReduceMean", CreateReduce<true>);
}

}  // namespace ge::cpu
