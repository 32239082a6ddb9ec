// NumPy .npy files (format version 1.0): what data dumps write. bfloat16, which NumPy has no
// type for, is widened to float32.
#pragma once

#include <string>
#include <string_view>

#include "ge/ir/tensor.h"

namespace ge {

// The whole file: header + little-endian C-order data.
Expected<std::string> EncodeNpy(const TensorDesc& desc, const void* data);

// A .npy file (versions 1-3, C order, little-endian or byte-sized types) as a tensor. The bytes
// are untrusted (ge_run's inputs): header, dtype, shape and size are checked before use.
Expected<Tensor> DecodeNpy(std::string_view bytes);

}  // namespace ge
