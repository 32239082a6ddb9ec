// NumPy .npy files (format version 1.0): what data dumps write. bfloat16, which NumPy has no
// type for, is widened to float32.
#pragma once

#include <string>

#include "ge/ir/tensor_desc.h"

namespace ge {

// The whole file: header + little-endian C-order data.
Expected<std::string> EncodeNpy(const TensorDesc& desc, const void* data);

}  // namespace ge
