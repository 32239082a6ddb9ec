// ge::Tensor: a desc plus host memory. The memory is either owned (through `owner`, which may
// be any object that keeps it alive, e.g. a framework tensor: zero-copy) or borrowed for the
// length of a call (owner == nullptr).
#pragma once

#include <cstring>
#include <memory>
#include <vector>

#include "ge/ir/tensor_desc.h"

namespace ge {

class Tensor {
 public:
  Tensor() = default;
  Tensor(TensorDesc desc, void* data, std::shared_ptr<void> owner)
      : desc_(std::move(desc)), data_(data), owner_(std::move(owner)) {}

  // Fresh 64-byte-aligned host memory, zero-filled.
  static Tensor Allocate(TensorDesc desc);
  template <typename T>
  static Tensor FromVector(DataType dtype, Shape shape, const std::vector<T>& values) {
    Tensor t = Allocate(TensorDesc(dtype, std::move(shape)));
    // memcpy's pointers must be valid even for 0 bytes; an empty vector's data() may be null.
    if (!values.empty()) std::memcpy(t.data(), values.data(), values.size() * sizeof(T));
    return t;
  }

  const TensorDesc& desc() const { return desc_; }
  void* data() const { return data_; }
  template <typename T>
  T* data_as() const {
    return static_cast<T*>(data_);
  }
  int64_t nbytes() const { return desc_.ByteSize(); }
  bool defined() const { return data_ != nullptr || desc_.NumElements() == 0; }
  const std::shared_ptr<void>& owner() const { return owner_; }

  // Integer contents (int32/int64) widened to int64: shape, axes and perm inputs.
  Expected<std::vector<int64_t>> ToInt64Vector() const;
  // Element `i` read as a size: int32/int64 as they are, float/double when the value is an
  // integer a double holds exactly (a range's bounds arrive as floats); an error otherwise.
  Expected<int64_t> SizeElement(int64_t i) const;

 private:
  TensorDesc desc_;
  void* data_ = nullptr;
  std::shared_ptr<void> owner_;
};

}  // namespace ge
