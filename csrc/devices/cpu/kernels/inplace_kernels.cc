// In-place updates of graph inputs: the output tensor is the input's memory.
#include <ATen/ops/index_copy.h>

#include <array>
#include <cstring>
#include <optional>
#include <vector>

#include "devices/cpu/kernel_registry.h"

namespace ge::cpu {
namespace {

// var.index_copy_(dim, indices, updates) as plain copies of the slices: a KV cache written at a
// decode step's position. ATen's index_copy_ builds a TensorIterator and checks overlaps on every
// call: 6-20 us to write 512 floats of a GPT layer's cache (16 of them a step, ~3% of the step),
// where the copy itself is well under a microsecond.
class SliceCopy {
 public:
  // nullopt where the operands are not a plain slice copy (then ATen's index_copy_ runs): other
  // dtypes on either side, an index that is not int64, shapes that differ off `dim`.
  static std::optional<SliceCopy> For(int64_t dim, const at::Tensor& var, const at::Tensor& indices,
                                      const at::Tensor& updates) {
    if (updates.scalar_type() != var.scalar_type() || indices.scalar_type() != at::kLong || indices.dim() != 1 ||
        updates.dim() != var.dim() || updates.size(dim) != indices.size(0))
      return std::nullopt;
    for (int64_t d = 0; d < var.dim(); ++d)
      if (d != dim && updates.size(d) != var.size(d)) return std::nullopt;
    if (var.dim() > kMaxRank || var.numel() == 0 || updates.numel() == 0) return std::nullopt;
    SliceCopy copy;
    copy.var_bytes_ = Extent(var) * var.element_size();
    copy.update_bytes_ = Extent(updates) * updates.element_size();
    copy.dim_ = dim;
    copy.element_bytes_ = static_cast<int64_t>(var.element_size());
    for (int64_t d = 0; d < var.dim(); ++d) {
      if (d == dim) continue;
      copy.sizes_.push_back(var.size(d));
      copy.var_strides_.push_back(var.stride(d));
      copy.update_strides_.push_back(updates.stride(d));
    }
    return copy;
  }

  void Run(at::Tensor& var, const at::Tensor& indices, const at::Tensor& updates) const {
    const auto* var_begin = static_cast<const char*>(var.const_data_ptr());
    const auto* update_begin = static_cast<const char*>(updates.const_data_ptr());
    if (var_begin < update_begin + update_bytes_ && update_begin < var_begin + var_bytes_) {
      var.index_copy_(dim_, indices, updates);  // sharing memory: ATen's checks (and eager's error)
      return;
    }
    const int64_t size = var.size(dim_);
    const int64_t* index = indices.const_data_ptr<int64_t>();
    auto* to = static_cast<char*>(var.data_ptr());
    const auto* from = static_cast<const char*>(updates.const_data_ptr());
    for (int64_t j = 0; j < indices.size(0); ++j) {
      const int64_t i = index[j * indices.stride(0)];
      TORCH_CHECK_INDEX(i >= 0 && i < size, "index_copy_(): index ", i, " is out of bounds for dimension ", dim_,
                        " with size ", size);
      CopySlice(from + j * updates.stride(dim_) * element_bytes_, to + i * var.stride(dim_) * element_bytes_);
    }
  }

 private:
  // One slice (every dim but `dim_`), element by element in row-major order, a contiguous
  // innermost run at a time.
  void CopySlice(const char* from, char* to) const {
    const int64_t rank = static_cast<int64_t>(sizes_.size());
    if (rank == 0) {
      std::memcpy(to, from, static_cast<size_t>(element_bytes_));
      return;
    }
    const int64_t inner = sizes_.back();
    const bool runs = var_strides_.back() == 1 && update_strides_.back() == 1;
    std::array<int64_t, kMaxRank> at{};  // the index over the outer dims of the slice
    while (true) {
      int64_t to_offset = 0, from_offset = 0;
      for (int64_t d = 0; d + 1 < rank; ++d) {
        to_offset += at[static_cast<size_t>(d)] * var_strides_[static_cast<size_t>(d)];
        from_offset += at[static_cast<size_t>(d)] * update_strides_[static_cast<size_t>(d)];
      }
      if (runs) {
        std::memcpy(to + to_offset * element_bytes_, from + from_offset * element_bytes_,
                    static_cast<size_t>(inner * element_bytes_));
      } else {
        for (int64_t k = 0; k < inner; ++k)
          std::memcpy(to + (to_offset + k * var_strides_.back()) * element_bytes_,
                      from + (from_offset + k * update_strides_.back()) * element_bytes_,
                      static_cast<size_t>(element_bytes_));
      }
      int64_t d = rank - 2;
      for (; d >= 0; --d) {
        if (++at[static_cast<size_t>(d)] < sizes_[static_cast<size_t>(d)]) break;
        at[static_cast<size_t>(d)] = 0;
      }
      if (d < 0) return;
    }
  }

  static constexpr int64_t kMaxRank = 16;

  // Elements from a tensor's first to its last one (strides as they are, none negative in a task).
  static int64_t Extent(const at::Tensor& t) {
    int64_t last = 0;
    for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
    return last + 1;
  }

  int64_t dim_ = 0, element_bytes_ = 0, var_bytes_ = 0, update_bytes_ = 0;
  std::vector<int64_t> sizes_, var_strides_, update_strides_;  // the dims other than dim_
};

}  // namespace

void RegisterInplaceKernels(CpuKernelRegistry& r) {
  r.Register("Assign", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    // (An Assign whose value the memory plan computed in ref's own bytes gets no task at all.)
    return MakeKernel(a.task, [ref = a.inputs[0], value = a.inputs[1]]() mutable { ref.copy_(value); });
  });
  r.Register("InplaceIndexCopy", [](KernelArgs& a) -> Expected<std::unique_ptr<Kernel>> {
    GE_ASSIGN_OR_RETURN(int64_t dim, a.Attr<int64_t>("dim"));
    if (dim < 0) dim += a.inputs[0].dim();
    // A 0-d index copies one slice: give it (and the update) the 1-D form index_copy_ takes.
    at::Tensor indices = a.inputs[1].dim() == 0 ? a.inputs[1].reshape({1}) : a.inputs[1];
    at::Tensor updates = a.inputs[2];
    if (updates.dim() != a.inputs[0].dim()) updates = updates.unsqueeze(dim);
    if (std::optional<SliceCopy> copy = SliceCopy::For(dim, a.inputs[0], indices, updates))
      return MakeKernel(a.task, [copy = std::move(*copy), var = a.inputs[0], indices, updates]() mutable {
        copy.Run(var, indices, updates);
      });
    return MakeKernel(a.task,
                      [dim, var = a.inputs[0], indices, updates]() mutable { var.index_copy_(dim, indices, updates); });
  });
}

}  // namespace ge::cpu
