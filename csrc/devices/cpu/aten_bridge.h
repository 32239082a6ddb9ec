// Conversions between the engine's types and ATen's. Only csrc/devices and csrc/python see this.
#pragma once

#include <ATen/core/Tensor.h>

#include "ge/ir/tensor.h"

namespace ge::cpu {

Expected<at::ScalarType> ToScalarType(DataType dtype);
Expected<DataType> FromScalarType(at::ScalarType type);
std::vector<int64_t> ContiguousStrides(const Shape& shape);

// A tensor over memory the engine manages (arena slice, constant): no ownership taken.
Expected<at::Tensor> WrapMemory(void* data, const TensorDesc& desc, const std::vector<int64_t>& strides = {});
// A tensor whose storage pointer is swapped per run (graph inputs/outputs). Every view made
// from it shares the storage and so follows the swap.
Expected<at::Tensor> MakeRebindableTensor(const TensorDesc& desc, c10::Storage* storage_out);
// A contiguous tensor of `desc` over an existing storage, `byte_offset` bytes in (a view of a
// rebindable I/O value).
Expected<at::Tensor> TensorOnStorage(const TensorDesc& desc, const c10::Storage& storage, int64_t byte_offset = 0,
                                     const std::vector<int64_t>& strides = {});
// An owning ge::Tensor that keeps `tensor` alive (zero-copy).
Expected<Tensor> ToGeTensor(const at::Tensor& tensor);
// An at::Tensor over a ge::Tensor's memory that keeps the ge::Tensor's owner alive (zero-copy).
Expected<at::Tensor> ToAtenTensor(const Tensor& tensor);

}  // namespace ge::cpu
