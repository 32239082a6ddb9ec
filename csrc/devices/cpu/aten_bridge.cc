#include "devices/cpu/aten_bridge.h"

#include <ATen/ops/from_blob.h>

namespace ge::cpu {
namespace {

struct Pair {
  DataType ge;
  at::ScalarType at;
};
constexpr Pair kPairs[] = {
    {DataType::kFloat, at::kFloat},   {DataType::kFloat16, at::kHalf},  {DataType::kBFloat16, at::kBFloat16},
    {DataType::kDouble, at::kDouble}, {DataType::kInt8, at::kChar},     {DataType::kInt16, at::kShort},
    {DataType::kInt32, at::kInt},     {DataType::kInt64, at::kLong},    {DataType::kUInt8, at::kByte},
    {DataType::kBool, at::kBool},     {DataType::kUInt16, at::kUInt16}, {DataType::kUInt32, at::kUInt32},
    {DataType::kUInt64, at::kUInt64},
};

}  // namespace

Expected<at::ScalarType> ToScalarType(DataType dtype) {
  for (const auto& p : kPairs)
    if (p.ge == dtype) return p.at;
  return InvalidArgument("dtype {} has no ATen equivalent", DataTypeName(dtype));
}

Expected<DataType> FromScalarType(at::ScalarType type) {
  for (const auto& p : kPairs)
    if (p.at == type) return p.ge;
  return InvalidArgument("torch dtype {} is not supported by torchair_ge", c10::toString(type));
}

std::vector<int64_t> ContiguousStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(shape[i], 1);
  return strides;
}

Expected<at::Tensor> WrapMemory(void* data, const TensorDesc& desc, const std::vector<int64_t>& strides) {
  GE_ASSIGN_OR_RETURN(at::ScalarType type, ToScalarType(desc.dtype));
  return at::from_blob(data, desc.shape, strides.empty() ? ContiguousStrides(desc.shape) : strides,
                       at::TensorOptions().dtype(type));
}

Expected<at::Tensor> MakeRebindableTensor(const TensorDesc& desc, c10::Storage* storage_out) {
  GE_ASSIGN_OR_RETURN(at::ScalarType type, ToScalarType(desc.dtype));
  c10::Storage storage(c10::Storage::use_byte_size_t(), static_cast<size_t>(desc.ByteSize()),
                       c10::DataPtr(nullptr, c10::Device(c10::kCPU)), /*allocator=*/nullptr, /*resizable=*/false);
  *storage_out = storage;  // shares the StorageImpl with the tensor
  auto tensor = at::detail::make_tensor<c10::TensorImpl>(std::move(storage), c10::DispatchKeySet(c10::DispatchKey::CPU),
                                                         c10::scalarTypeToTypeMeta(type));
  tensor.unsafeGetTensorImpl()->set_sizes_contiguous(desc.shape);
  return tensor;
}

Expected<at::Tensor> TensorOnStorage(const TensorDesc& desc, const c10::Storage& storage, int64_t byte_offset,
                                     const std::vector<int64_t>& strides) {
  GE_ASSIGN_OR_RETURN(at::ScalarType type, ToScalarType(desc.dtype));
  const int64_t item = DataTypeSize(desc.dtype);
  GE_CHECK(byte_offset % item == 0, "view offset {} is not a multiple of the element size {}", byte_offset, item);
  auto tensor = at::detail::make_tensor<c10::TensorImpl>(
      c10::Storage(storage), c10::DispatchKeySet(c10::DispatchKey::CPU), c10::scalarTypeToTypeMeta(type));
  if (strides.empty())
    tensor.unsafeGetTensorImpl()->set_sizes_contiguous(desc.shape);
  else
    tensor.unsafeGetTensorImpl()->set_sizes_and_strides(desc.shape, strides);
  tensor.unsafeGetTensorImpl()->set_storage_offset(byte_offset / item);
  return tensor;
}

Expected<Tensor> ToGeTensor(const at::Tensor& tensor) {
  GE_CHECK(tensor.device().is_cpu(), "expected a CPU tensor, got one on {}", tensor.device().str());
  GE_CHECK(tensor.is_contiguous(), "expected a contiguous tensor");
  GE_ASSIGN_OR_RETURN(DataType dtype, FromScalarType(tensor.scalar_type()));
  auto keep = std::make_shared<at::Tensor>(tensor);
  return Tensor(TensorDesc(dtype, tensor.sizes().vec()), tensor.data_ptr(), std::static_pointer_cast<void>(keep));
}

Expected<at::Tensor> ToAtenTensor(const Tensor& tensor) {
  GE_ASSIGN_OR_RETURN(at::ScalarType type, ToScalarType(tensor.desc().dtype));
  std::shared_ptr<void> owner = tensor.owner();
  return at::from_blob(
      tensor.data(), tensor.desc().shape, ContiguousStrides(tensor.desc().shape),
      [owner](void*) mutable { owner.reset(); }, at::TensorOptions().dtype(type));
}

}  // namespace ge::cpu
