#include "ge/ir/tensor_desc.h"

#include <algorithm>

#include <fmt/format.h>

namespace ge {

std::string ShapeToString(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

bool IsStaticShape(const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0) return false;
  return true;
}

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}

bool AddressableShape(const Shape& shape, int64_t dtype_size) {
  int64_t bytes = std::max<int64_t>(dtype_size, 1);
  for (int64_t d : shape) {
    if (d < 0) continue;
    if (__builtin_mul_overflow(bytes, d, &bytes) || bytes >= kMaxTensorBytes) return false;
  }
  return true;
}

int64_t TensorDesc::ByteSize() const {
  int64_t n = NumElements();
  return n < 0 ? -1 : n * DataTypeSize(dtype);
}

std::vector<bool> TensorDesc::FixedDims() const {
  std::vector<bool> fixed(shape.size(), false);
  if (symbolic.size() != shape.size()) return fixed;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!symbolic[d].IsConstant()) continue;
    const Expected<int64_t> value = symbolic[d].Evaluate({});
    fixed[d] = value.ok() && *value == shape[d];
  }
  return fixed;
}

std::string TensorDesc::ToString() const { return fmt::format("{}{}", DataTypeName(dtype), ShapeToString(shape)); }

}  // namespace ge
