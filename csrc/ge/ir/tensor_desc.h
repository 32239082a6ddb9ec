// TensorDesc: what a value is (dtype, shape, format), with GE's origin vs storage split.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ge/ir/sym_expr.h"
#include "ge/ir/types.h"

namespace ge {

// Dimensions; -1 is an unknown dimension, an empty shape is a scalar.
using Shape = std::vector<int64_t>;
inline constexpr int64_t kUnknownDim = -1;

std::string ShapeToString(const Shape& shape);  // "[2,3]"
bool IsStaticShape(const Shape& shape);
int64_t NumElements(const Shape& shape);  // -1 when any dim is unknown
// Tensors the engine can address: every element count and byte size fits int64 with room for
// offset arithmetic (below 2^62 bytes).
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 62;
// Whether a static shape of `dtype_size`-byte elements stays below kMaxTensorBytes (dims >= 0;
// unknown dims count as 1). Checked with overflow-safe products.
bool AddressableShape(const Shape& shape, int64_t dtype_size);

struct TensorDesc {
  DataType dtype = DataType::kUndefined;
  Shape shape;  // storage shape
  Format format = Format::kND;
  Shape origin_shape;  // the shape the framework sees (equal to `shape` until a layout pass changes storage)
  Format origin_format = Format::kND;
  // `shape` as expressions over the size symbols of a graph instantiated from an optimized size
  // template (symbolic/size_template.h; checked at every instantiation), one per dim: a constant
  // where the dim is the same at every size. Empty: not known. It annotates `shape` and is not
  // part of ==; a stale one (a pass changed the shape) only makes dims count as varying.
  std::vector<SymExpr> symbolic;

  TensorDesc() = default;
  TensorDesc(DataType dt, Shape s, Format f = Format::kND)
      : dtype(dt), shape(s), format(f), origin_shape(std::move(s)), origin_format(f) {}

  void SetShape(Shape s) {
    origin_shape = s;
    shape = std::move(s);
  }
  bool IsStatic() const { return IsStaticShape(shape); }
  int64_t NumElements() const { return ge::NumElements(shape); }
  int64_t ByteSize() const;  // -1 when the shape is not static
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  std::string ToString() const;  // "DT_FLOAT[2,3]"
  // Per dim: whether it is the same at every size of the graph's symbols -- a constant of
  // `symbolic` that equals the dim. All false when `symbolic` is not known.
  std::vector<bool> FixedDims() const;
  bool operator==(const TensorDesc& o) const {
    return dtype == o.dtype && shape == o.shape && format == o.format && origin_shape == o.origin_shape &&
           origin_format == o.origin_format;
  }
};

}  // namespace ge
