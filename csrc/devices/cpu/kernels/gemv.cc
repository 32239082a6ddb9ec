#include "devices/cpu/kernels/gemv.h"

#include <ATen/Parallel.h>

#include <algorithm>

#include "devices/cpu/kernels/isa_dispatch.h"

namespace ge::cpu {
namespace gemv_detail {

void RowsPortable(const GemvArgs& a, int64_t begin, int64_t end) {
  for (int64_t m = 0; m < a.rows; ++m)
    for (int64_t j = begin; j < end; ++j) {
      float s = 0.f;
      for (int64_t i = 0; i < a.k; ++i) s += a.w[j * a.k + i] * a.x[m * a.x_stride + i];
      a.y[m * a.y_stride + j] = s + (a.bias ? a.bias[j] : 0.f);
    }
}

void FewColumnsPortable(const GemvArgs& a, int64_t begin, int64_t end) {
  for (int64_t m = begin; m < end; ++m)
    for (int64_t j = 0; j < a.n; ++j) {
      float s = 0.f;
      for (int64_t i = 0; i < a.k; ++i) s += a.w[j * a.k + i] * a.x[m * a.x_stride + i];
      a.y[m * a.y_stride + j] = s + (a.bias ? a.bias[j] : 0.f);
    }
}

}  // namespace gemv_detail

void GemvRows(const GemvArgs& a, int64_t begin, int64_t end) {
  static const auto rows = ForThisCpu(&gemv_detail::RowsAvx512, &gemv_detail::RowsAvx2, &gemv_detail::RowsPortable);
  rows(a, begin, end);
}

namespace {
// body over every weight row, split over the intra-op threads in chunks of at least 64 KiB of
// weights: a thread is worth waking for that much streaming.
void OverWeightRows(const GemvArgs& a, void (*body)(const GemvArgs&, int64_t, int64_t)) {
  const int64_t grain = std::max<int64_t>(2, (int64_t{1} << 14) / std::max<int64_t>(a.k, 1));
  at::parallel_for(0, a.n, grain, [&](int64_t begin, int64_t end) { body(a, begin, end); });
}
}  // namespace

void Gemv(const GemvArgs& a) { OverWeightRows(a, GemvRows); }

void GemvInterleavedRows(const GemvArgs& a, int64_t begin, int64_t end) {
  static const auto rows =
      ForThisCpu(&gemv_detail::InterleavedAvx512, &gemv_detail::InterleavedAvx2, &gemv_detail::RowsPortable);
  rows(a, begin, end);
}

void GemvInterleaved(const GemvArgs& a) { OverWeightRows(a, GemvInterleavedRows); }

void FewColumnRows(const GemvArgs& a, int64_t begin, int64_t end) {
  static const auto rows =
      ForThisCpu(&gemv_detail::FewColumnsAvx512, &gemv_detail::FewColumnsAvx2, &gemv_detail::FewColumnsPortable);
  rows(a, begin, end);
}

void FewColumns(const GemvArgs& a) {
  // Tasks of at least 32 Ki multiply-adds: below that, waking a thread costs more than it saves.
  const int64_t grain = std::max<int64_t>(16, (int64_t{1} << 15) / std::max<int64_t>(a.k * a.n, 1));
  at::parallel_for(0, a.rows, grain, [&](int64_t begin, int64_t end) { FewColumnRows(a, begin, end); });
}

}  // namespace ge::cpu
