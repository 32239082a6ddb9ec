// Data movement kernels. Reshape/Flatten copy for now; zero-copy views arrive with the
// memory planner's aliasing support.
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>

#include <optional>
#include <vector>

#include "devices/cpu/kernel_registry.h"
#include "devices/cpu/kernels/transpose_rows.h"

namespace ge::cpu {
namespace {

// y viewed with x's shape receives x: a straight contiguous copy.
Expected<std::unique_ptr<Kernel>> CreateReshapeCopy(KernelArgs& a) {
  at::Tensor dst = a.outputs[0].view(a.inputs[0].sizes());
  return MakeKernel(a.task, [dst, x = a.inputs[0]]() mutable { dst.copy_(x); });
}

// A transpose that swaps two blocks of a dense float tensor's dims: [b, rows, cols] -> [b, cols,
// rows] (NCHW -> NHWC: rows C, cols H * W; NHWC -> NCHW the other way round).
struct BlockSwap {
  int64_t batches, rows, cols;
};

// The swap `perm` is on `x` (dense float32, 3 dims or more), if it is one: dims [1, k) moved
// behind dims [k, n), the first dim kept.
std::optional<BlockSwap> BlockSwapOf(const at::Tensor& x, const std::vector<int64_t>& perm) {
  const int64_t n = x.dim();
  if (x.scalar_type() != at::kFloat || !x.is_contiguous() || n < 3 || static_cast<int64_t>(perm.size()) != n ||
      perm[0] != 0)
    return std::nullopt;
  for (int64_t k = 2; k < n; ++k) {
    bool swap = true;  // perm = 0, k, ..., n-1, 1, ..., k-1
    for (int64_t i = 1; i < n; ++i) swap = swap && perm[i] == (i <= n - k ? i + k - 1 : i - (n - k));
    if (!swap) continue;
    int64_t rows = 1, cols = 1;
    for (int64_t d = 1; d < k; ++d) rows *= x.size(d);
    for (int64_t d = k; d < n; ++d) cols *= x.size(d);
    return BlockSwap{x.size(0), rows, cols};
  }
  return std::nullopt;
}

Expected<std::unique_ptr<Kernel>> CreateTranspose(KernelArgs& a) {
  const std::vector<int64_t> perm = ConstIntValues(a.inputs[1]);
  const at::Tensor& y = a.outputs[0];
  if (const std::optional<BlockSwap> swap = BlockSwapOf(a.inputs[0], perm); swap && y.is_contiguous())
    return MakeKernel(a.task, [s = *swap, x = a.inputs[0], y]() mutable {
      // y[b, c, r] = x[b, r, c]; ATen's copy of the permuted view walks the output element by
      // element through strided reads (a batch-1 ResNet's input image, 3 x 112 x 112: 41-75 us
      // on a Zen 4).
      const int64_t block = s.rows * s.cols;
      for (int64_t b = 0; b < s.batches; ++b)
        TransposeAddBias(x.const_data_ptr<float>() + b * block, s.rows, s.cols, nullptr,
                         y.data_ptr<float>() + b * block, s.rows);
    });
  at::Tensor src = a.inputs[0].permute(perm);
  return MakeKernel(a.task, [src, y]() mutable { y.copy_(src); });
}

Expected<std::unique_ptr<Kernel>> CreateConcatV2(KernelArgs& a) {
  std::vector<at::Tensor> parts(a.inputs.begin(), a.inputs.end() - 1);
  const int64_t dim = ConstIntValues(a.inputs.back()).at(0);
  return MakeKernel(a.task, [parts, dim, y = a.outputs[0]]() mutable { at::cat_out(y, parts, dim); });
}

// The bounds are read at each run (inputs need not be constants), into the planned output.
Expected<std::unique_ptr<Kernel>> CreateRange(KernelArgs& a) {
  const std::string name = a.task.name;
  return MakeKernel(
      a.task, [name, start = a.inputs[0], limit = a.inputs[1], delta = a.inputs[2], y = a.outputs[0]]() mutable {
        // arange_out would resize a wrong-length output, which here is a view of the arena.
        at::Tensor values = at::arange(start.item(), limit.item(), delta.item(), y.options());
        if (values.numel() != y.numel())
          throw std::length_error(
              fmt::format("Range '{}': the bounds give {} elements, the plan has {}", name, values.numel(), y.numel()));
        y.copy_(values);
      });
}

}  // namespace

void RegisterArrayKernels(CpuKernelRegistry& r) {
  r.Register("Reshape", CreateReshapeCopy);
  r.Register("Flatten", CreateReshapeCopy);
  r.Register("Transpose", CreateTranspose);
  r.Register("ConcatV2", CreateConcatV2);
  r.Register("Range", CreateRange);
}

}  // namespace ge::cpu
