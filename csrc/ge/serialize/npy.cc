#include "ge/serialize/npy.h"

#include <cstring>

#include <fmt/format.h>

namespace ge {
namespace {

// NumPy's type string, or "" when there is none.
const char* NpyDescr(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat: return "<f4";
    case DataType::kFloat16: return "<f2";
    case DataType::kDouble: return "<f8";
    case DataType::kInt8: return "|i1";
    case DataType::kUInt8: return "|u1";
    case DataType::kInt16: return "<i2";
    case DataType::kUInt16: return "<u2";
    case DataType::kInt32: return "<i4";
    case DataType::kUInt32: return "<u4";
    case DataType::kInt64: return "<i8";
    case DataType::kUInt64: return "<u8";
    case DataType::kBool: return "|b1";
    case DataType::kBFloat16: return "<f4";  // widened
    case DataType::kUndefined: break;
  }
  return "";
}

}  // namespace

Expected<std::string> EncodeNpy(const TensorDesc& desc, const void* data) {
  const char* descr = NpyDescr(desc.dtype);
  GE_CHECK(*descr != '\0', "cannot write dtype {} as .npy", DataTypeName(desc.dtype));
  for (int64_t d : desc.shape) GE_CHECK(d >= 0, "cannot write shape {} as .npy", ShapeToString(desc.shape));
  std::string shape;  // "2, 3", "4," (a 1-tuple), "" (a scalar)
  for (size_t i = 0; i < desc.shape.size(); ++i) shape += fmt::format("{}{}", i ? ", " : "", desc.shape[i]);
  if (desc.shape.size() == 1) shape += ',';
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, shape);
  // Magic (6) + version (2) + header length (2) + header, padded with spaces to a multiple of 64, ending in '\n'.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';

  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  const int64_t n = desc.NumElements();
  if (desc.dtype == DataType::kBFloat16) {
    const auto* src = static_cast<const uint16_t*>(data);
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t bits = static_cast<uint32_t>(src[i]) << 16;
      out.append(reinterpret_cast<const char*>(&bits), 4);
    }
  } else {
    out.append(static_cast<const char*>(data), static_cast<size_t>(desc.ByteSize()));
  }
  return out;
}

}  // namespace ge
