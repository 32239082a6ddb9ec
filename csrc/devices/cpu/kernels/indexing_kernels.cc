// Indexing with constant parameters (views prepared at load, one copy per run), gathers,
// stacking, advanced indexing, histograms, comparisons, logical ops and selection.
#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>

#include <ATen/Parallel.h>

#include <ATen/ops/eq.h>
#include <ATen/ops/ge.h>
#include <ATen/ops/gt.h>
#include <ATen/ops/histc.h>
#include <ATen/ops/index.h>
#include <ATen/ops/index_put.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/le.h>
#include <ATen/ops/logical_and.h>
#include <ATen/ops/logical_not.h>
#include <ATen/ops/logical_or.h>
#include <ATen/ops/lt.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/where.h>

#include <fmt/format.h>

#include "devices/cpu/kernel_registry.h"

namespace ge::cpu {
namespace {

// y receives a view of x prepared once (broadcast, slice).
std::unique_ptr<Kernel> CopyFromView(const TaskDef& task, at::Tensor view, at::Tensor y) {
  return MakeKernel(task, [view, y]() mutable { y.copy_(view); });
}

Expected<std::unique_ptr<Kernel>> CreateStridedSliceV2(KernelArgs& a) {
  const auto begin = ConstIntValues(a.inputs[1]), end = ConstIntValues(a.inputs[2]);
  const auto axes = ConstIntValues(a.inputs[3]), strides = ConstIntValues(a.inputs[4]);
  at::Tensor view = a.inputs[0];
  for (size_t i = 0; i < axes.size(); ++i) view = view.slice(axes[i], begin[i], end[i], strides[i]);
  return CopyFromView(a.task, view, a.outputs[0]);
}

// The gather of embedding lookups: whole rows of a dense table by a 1-D index. Row copies cost
// ~0.5 us for 512 rows of 64 bytes where index_select_out's dispatch and checks cost ~5 us
// (widedeep's 16 lookups were 15% of its run). An index outside the table is an error naming
// it, as index_select's is.
// Rows of kBytes (a constant: the copy is a few moves, not a call), or of `row_bytes` (0).
template <typename Index, int64_t kBytes>
void CopyRowRange(const TaskDef& task, const char* table, int64_t rows, int64_t row_bytes, const Index* index,
                  int64_t stride, char* out, int64_t begin, int64_t end) {
  const int64_t bytes = kBytes ? kBytes : row_bytes;
  for (int64_t i = begin; i < end; ++i) {
    const int64_t row = static_cast<int64_t>(index[i * stride]);
    if (row < 0 || row >= rows)
      throw std::out_of_range(fmt::format("{} '{}': index {} (position {}) is out of range for a table of {} rows",
                                          task.type, task.name, row, i, rows));
    std::memcpy(out + i * bytes, table + row * bytes, static_cast<size_t>(bytes));
  }
}

template <typename Index>
void CopyRows(const TaskDef& task, const at::Tensor& x, const at::Tensor& indices, const at::Tensor& y) {
  const int64_t rows = x.size(0), n = indices.numel(), stride = indices.stride(0);
  const int64_t row_bytes = rows == 0 ? 0 : static_cast<int64_t>(x.nbytes()) / rows;
  const char* table = static_cast<const char*>(x.const_data_ptr());
  const Index* index = indices.const_data_ptr<Index>();
  char* out = static_cast<char*>(y.data_ptr());
  auto copy = [&](int64_t begin, int64_t end) {
    switch (row_bytes) {  // embedding rows of 1-32 floats
      case 4: return CopyRowRange<Index, 4>(task, table, rows, row_bytes, index, stride, out, begin, end);
      case 16: return CopyRowRange<Index, 16>(task, table, rows, row_bytes, index, stride, out, begin, end);
      case 32: return CopyRowRange<Index, 32>(task, table, rows, row_bytes, index, stride, out, begin, end);
      case 64: return CopyRowRange<Index, 64>(task, table, rows, row_bytes, index, stride, out, begin, end);
      case 128: return CopyRowRange<Index, 128>(task, table, rows, row_bytes, index, stride, out, begin, end);
      default: return CopyRowRange<Index, 0>(task, table, rows, row_bytes, index, stride, out, begin, end);
    }
  };
  // Threads only when the bytes moved pay for waking them (~256 KiB).
  if (n * row_bytes < (int64_t{1} << 18))
    copy(0, n);
  else
    at::parallel_for(0, n, std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(row_bytes, 1)), copy);
}

std::optional<std::unique_ptr<Kernel>> RowGather(const TaskDef& task, const at::Tensor& x, const at::Tensor& indices,
                                                 const at::Tensor& y) {
  const bool long_index = indices.scalar_type() == at::kLong, int_index = indices.scalar_type() == at::kInt;
  if (x.dim() < 1 || !x.is_contiguous() || !y.is_contiguous() || indices.dim() != 1 || !(long_index || int_index))
    return std::nullopt;
  return MakeKernel(task, [&task, x, indices, y, long_index]() {
    if (long_index)
      CopyRows<int64_t>(task, x, indices, y);
    else
      CopyRows<int32_t>(task, x, indices, y);
  });
}

Expected<std::unique_ptr<Kernel>> CreateGatherV2(KernelArgs& a) {
  const at::Tensor& x = a.inputs[0];
  int64_t axis = ConstIntValues(a.inputs[2]).at(0);
  if (axis < 0) axis += x.dim();
  if (axis == 0)
    if (auto rows = RowGather(a.task, x, a.inputs[1], a.outputs[0])) return std::move(*rows);
  // index_select on the flattened indices into the output viewed with one gathered dim.
  std::vector<int64_t> flat_shape(x.sizes().begin(), x.sizes().end());
  flat_shape[static_cast<size_t>(axis)] = a.inputs[1].numel();
  at::Tensor y = a.outputs[0].view(flat_shape);
  // 1-D indices are used as they are (they may be a strided view: a column of a matrix);
  // reshape would copy those once, at load.
  at::Tensor indices = a.inputs[1].dim() == 1 ? a.inputs[1] : a.inputs[1].reshape({-1});
  return MakeKernel(a.task, [x, axis, indices, y]() mutable { at::index_select_out(y, x, axis, indices); });
}

Expected<std::unique_ptr<Kernel>> CreatePack(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(int64_t axis, a.Attr<int64_t>("axis"));
  std::vector<at::Tensor> parts(a.inputs.begin(), a.inputs.end());
  return MakeKernel(a.task, [parts, axis, y = a.outputs[0]]() mutable { at::stack_out(y, parts, axis); });
}

Expected<std::unique_ptr<Kernel>> CreateMaskedFill(KernelArgs& a) {
  return MakeKernel(a.task, [x = a.inputs[0], mask = a.inputs[1], value = a.inputs[2], y = a.outputs[0]]() mutable {
    y.copy_(x);
    y.masked_fill_(mask, value);
  });
}

// torch's index list: the index tensors at their dims, undefined (a full slice) elsewhere.
Expected<c10::List<std::optional<at::Tensor>>> IndexList(KernelArgs& a, size_t first_index, int64_t rank) {
  GE_ASSIGN_OR_RETURN(std::vector<int64_t> dims, a.Attr<std::vector<int64_t>>("indexed_dims"));
  if (dims.size() != a.inputs.size() - first_index)
    return InvalidArgument("{}: {} indexed dims for {} index tensors", a.task.name, dims.size(),
                           a.inputs.size() - first_index);
  c10::List<std::optional<at::Tensor>> list;
  for (int64_t d = 0; d < rank && !dims.empty() && d <= dims.back(); ++d) {
    auto it = std::find(dims.begin(), dims.end(), d);
    list.push_back(it == dims.end() ? std::optional<at::Tensor>()
                                    : std::optional<at::Tensor>(a.inputs[first_index + (it - dims.begin())]));
  }
  return list;
}

Expected<std::unique_ptr<Kernel>> CreateIndex(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(auto indices, IndexList(a, 1, a.inputs[0].dim()));
  return MakeKernel(a.task, [x = a.inputs[0], indices, y = a.outputs[0]]() mutable { at::index_out(y, x, indices); });
}

Expected<std::unique_ptr<Kernel>> CreateIndexPut(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(auto indices, IndexList(a, 2, a.inputs[0].dim()));
  GE_ASSIGN_OR_RETURN(bool accumulate, a.Attr<bool>("accumulate"));
  return MakeKernel(a.task, [x = a.inputs[0], values = a.inputs[1], indices, accumulate, y = a.outputs[0]]() mutable {
    y.copy_(x);
    y.index_put_(indices, values, accumulate);
  });
}

Expected<std::unique_ptr<Kernel>> CreateHistc(KernelArgs& a) {
  GE_ASSIGN_OR_RETURN(int64_t bins, a.Attr<int64_t>("bins"));
  GE_ASSIGN_OR_RETURN(double min, a.Attr<double>("min"));
  GE_ASSIGN_OR_RETURN(double max, a.Attr<double>("max"));
  return MakeKernel(
      a.task, [x = a.inputs[0], bins, min, max, y = a.outputs[0]]() mutable { at::histc_out(y, x, bins, min, max); });
}

}  // namespace

void RegisterIndexingKernels(CpuKernelRegistry& r) {
  r.Register("BroadcastTo", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    return CopyFromView(a.task, a.inputs[0].expand(a.outputs[0].sizes()), a.outputs[0]);
  });
  r.Register("StridedSliceV2", CreateStridedSliceV2);
  r.Register("GatherV2", CreateGatherV2);
  r.Register("Pack", CreatePack);
  r.Register("Index", CreateIndex);
  r.Register("IndexPut", CreateIndexPut);
  r.Register("Histc", CreateHistc);
  r.Register("MaskedFill", CreateMaskedFill);
  r.Register("SelectV2", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    return MakeKernel(a.task, [c = a.inputs[0], t = a.inputs[1], e = a.inputs[2], y = a.outputs[0]]() mutable {
      at::where_out(y, c, t, e);
    });
  });
  r.Register("LogicalNot", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    return MakeKernel(a.task, [x = a.inputs[0], y = a.outputs[0]]() mutable { at::logical_not_out(y, x); });
  });
  r.RegisterBinary("LogicalAnd", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& {
    return at::logical_and_out(y, a, b);
  });
  r.RegisterBinary("LogicalOr", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& {
    return at::logical_or_out(y, a, b);
  });
  r.RegisterBinary("Equal", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& {
    return at::eq_out(y, a, b);
  });
  r.RegisterBinary("NotEqual", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& {
    return at::ne_out(y, a, b);
  });
  r.RegisterBinary("Less", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& {
    return at::lt_out(y, a, b);
  });
  r.RegisterBinary("LessEqual", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& {
    return at::le_out(y, a, b);
  });
  r.RegisterBinary("Greater", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& {
    return at::gt_out(y, a, b);
  });
  r.RegisterBinary("GreaterEqual", [](at::Tensor& y, const at::Tensor& a, const at::Tensor& b) -> at::Tensor& {
    return at::ge_out(y, a, b);
  });
}

}  // namespace ge::cpu
