// RotaryMul: y = x * r1 + rotate_half(x) * r2, rotate_half(x) = concat(-x2, x1) of x's last-dim
// halves (the rotary embedding of LLaMA-style attention; rules/rotary_mul.cc makes the node).
// Float32 with unit last-dim strides runs one pass per row: each output element reads its own x,
// the x of the other half, and r1, r2 (broadcast by strides); the product and sum are eager's
// (x * r1 and rotate_half(x) * r2 rounded, then added: no fused multiply-add), so the numbers are
// eager's; AVX2 vectors where the CPU has them. Anything else computes eager's expression with ATen.
#include <ATen/Parallel.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/neg.h>

#include <array>
#include <optional>

#include "devices/cpu/kernel_registry.h"
#include "devices/cpu/kernels/isa_dispatch.h"

namespace ge::cpu {
namespace {

constexpr int64_t kMaxRank = 8;

// One row of y: its first half x1 * c - x2 * s, its second x2 * c + x1 * s (eager's roundings:
// each product rounded, then the sum; -(x2 * s) is (-x2) * s exactly), both halves in one loop
// that reads each x once. y has bytes of its own: a task's output is live while its inputs are.
inline void RotateRow(const float* __restrict x, const float* __restrict c, const float* __restrict s,
                      float* __restrict y, int64_t h) {
  for (int64_t j = 0; j < h; ++j) {
    const float x1 = x[j], x2 = x[j + h];
    y[j] = x1 * c[j] - x2 * s[j];
    y[j + h] = x2 * c[j + h] + x1 * s[j + h];
  }
}

// The same loops in AVX2 vectors (no FMA: a fused product-sum would round differently from eager).
__attribute__((target("avx2"))) void RotateRowAvx2(const float* x, const float* c, const float* s, float* y,
                                                   int64_t h) {
  RotateRow(x, c, s, y, h);
}

void RotateRowPortable(const float* x, const float* c, const float* s, float* y, int64_t h) {
  RotateRow(x, c, s, y, h);
}

using RowFn = void (*)(const float*, const float*, const float*, float*, int64_t);

// The float32 pass: rows of x's last dim, r1 and r2 read through their broadcast strides.
class RotaryRows {
 public:
  static std::optional<RotaryRows> For(const at::Tensor& x, const at::Tensor& r1, const at::Tensor& r2,
                                       const at::Tensor& y) {
    const bool f32 = x.scalar_type() == at::kFloat && r1.scalar_type() == at::kFloat &&
                     r2.scalar_type() == at::kFloat && y.scalar_type() == at::kFloat;
    if (!f32 || x.dim() == 0 || x.dim() > kMaxRank || !y.is_contiguous() || y.sizes() != x.sizes()) return std::nullopt;
    RotaryRows rows;
    const at::Tensor c = r1.expand(x.sizes()), s = r2.expand(x.sizes());
    if (x.stride(-1) != 1 || c.stride(-1) != 1 || s.stride(-1) != 1) return std::nullopt;
    rows.rank_ = x.dim() - 1;
    rows.half_ = x.size(-1) / 2;
    for (int64_t d = 0; d < rows.rank_; ++d) {
      rows.sizes_[d] = x.size(d);
      rows.strides_[0][d] = x.stride(d);
      rows.strides_[1][d] = c.stride(d);
      rows.strides_[2][d] = s.stride(d);
    }
    rows.rows_ = x.numel() / std::max<int64_t>(x.size(-1), 1);
    return rows;
  }

  void Run(const at::Tensor& x, const at::Tensor& r1, const at::Tensor& r2, at::Tensor& y) const {
    const float* bases[3] = {x.const_data_ptr<float>(), r1.const_data_ptr<float>(), r2.const_data_ptr<float>()};
    float* out = y.data_ptr<float>();
    static const RowFn rotate = ForThisCpu<RowFn>(&RotateRowAvx2, &RotateRowAvx2, &RotateRowPortable);
    const int64_t width = 2 * half_, grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(width, 1));
    at::parallel_for(0, rows_, grain, [&](int64_t begin, int64_t end) {
      // The leading-dim index of row `begin`, then counted up row by row (no division per row).
      std::array<int64_t, kMaxRank> index{};
      std::array<const float*, 3> p = {bases[0], bases[1], bases[2]};
      for (int64_t d = rank_ - 1, rest = begin; d >= 0; --d) {
        index[d] = rest % sizes_[d];
        rest /= sizes_[d];
        for (int k = 0; k < 3; ++k) p[k] += index[d] * strides_[k][d];
      }
      for (int64_t row = begin; row < end; ++row) {
        rotate(p[0], p[1], p[2], out + row * width, half_);
        for (int64_t d = rank_ - 1; d >= 0; --d) {
          for (int k = 0; k < 3; ++k) p[k] += strides_[k][d];
          if (++index[d] < sizes_[d]) break;
          for (int k = 0; k < 3; ++k) p[k] -= sizes_[d] * strides_[k][d];
          index[d] = 0;
        }
      }
    });
  }

 private:
  int64_t rank_ = 0, half_ = 0, rows_ = 0;
  std::array<int64_t, kMaxRank> sizes_{};
  std::array<std::array<int64_t, kMaxRank>, 3> strides_{};  // x, r1, r2
};

Expected<std::unique_ptr<Kernel>> CreateRotaryMul(KernelArgs& a) {
  GE_CHECK(a.inputs.size() == 3 && a.outputs.size() == 1, "RotaryMul '{}' takes x, r1, r2 and gives y", a.task.name);
  if (auto rows = RotaryRows::For(a.inputs[0], a.inputs[1], a.inputs[2], a.outputs[0]))
    return MakeKernel(a.task, [rows = *rows, x = a.inputs[0], r1 = a.inputs[1], r2 = a.inputs[2],
                               y = a.outputs[0]]() mutable { rows.Run(x, r1, r2, y); });
  return MakeKernel(a.task, [x = a.inputs[0], r1 = a.inputs[1], r2 = a.inputs[2], y = a.outputs[0]]() mutable {
    const int64_t h = x.size(-1) / 2;
    const at::Tensor rotated = at::cat({at::neg(x.narrow(-1, h, h)), x.narrow(-1, 0, h)}, -1);
    y.copy_(x.mul(r1).add_(rotated.mul(r2)));
  });
}

}  // namespace

void RegisterRotaryKernels(CpuKernelRegistry& r) { r.Register("RotaryMul", CreateRotaryMul); }

}  // namespace ge::cpu
