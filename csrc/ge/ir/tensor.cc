#include "ge/ir/tensor.h"

#include <cmath>
#include <cstdlib>

namespace ge {

Tensor Tensor::Allocate(TensorDesc desc) {
  const int64_t bytes = std::max<int64_t>(desc.ByteSize(), 1);
  const size_t rounded = static_cast<size_t>((bytes + 63) / 64 * 64);
  void* data = std::aligned_alloc(64, rounded);
  std::memset(data, 0, rounded);
  return Tensor(std::move(desc), data, std::shared_ptr<void>(data, [](void* p) { std::free(p); }));
}

Expected<std::vector<int64_t>> Tensor::ToInt64Vector() const {
  const int64_t n = desc_.NumElements();
  GE_CHECK(n >= 0, "tensor {} has no static shape", desc_.ToString());
  std::vector<int64_t> out(static_cast<size_t>(n));
  if (desc_.dtype == DataType::kInt64) {
    if (n > 0) std::memcpy(out.data(), data_, static_cast<size_t>(n) * 8);  // data_ may be null when empty
  } else if (desc_.dtype == DataType::kInt32) {
    for (int64_t i = 0; i < n; ++i) out[i] = data_as<int32_t>()[i];
  } else {
    return InvalidArgument("expected an int32/int64 tensor, got {}", desc_.ToString());
  }
  return out;
}

Expected<int64_t> Tensor::SizeElement(int64_t i) const {
  switch (desc_.dtype) {
    case DataType::kInt64: return data_as<int64_t>()[i];
    case DataType::kInt32: return int64_t{data_as<int32_t>()[i]};
    case DataType::kFloat:
    case DataType::kDouble: {
      const double v = desc_.dtype == DataType::kFloat ? data_as<float>()[i] : data_as<double>()[i];
      GE_CHECK(std::isfinite(v) && std::nearbyint(v) == v && std::fabs(v) < 9.0e15,
               "element {} ({}) is not an integer size", i, v);
      return static_cast<int64_t>(v);
    }
    default: return InvalidArgument("a {} tensor holds no sizes", DataTypeName(desc_.dtype));
  }
}

}  // namespace ge
