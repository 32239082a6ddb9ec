#include "ge/serialize/npy.h"

#include <cstring>
#include <optional>

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

// The header dict's value after `'key':` (up to the next ',' outside parentheses, or '}').
std::optional<std::string> HeaderField(std::string_view header, std::string_view key) {
  const std::string quoted = fmt::format("'{}'", key);
  size_t at = header.find(quoted);
  if (at == std::string_view::npos) return std::nullopt;
  at = header.find(':', at + quoted.size());
  if (at == std::string_view::npos) return std::nullopt;
  size_t end = ++at;
  int depth = 0;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth < 0 || (depth == 0 && (c == ',' || c == '}'))) break;
  }
  if (depth == 0 && end < header.size() && header[end] == ')') ++end;
  std::string value(header.substr(at, end - at));
  value.erase(0, value.find_first_not_of(' '));
  value.erase(value.find_last_not_of(' ') + 1);
  return value;
}

Expected<DataType> DtypeOfDescr(const std::string& descr) {
  for (DataType dt :
       {DataType::kFloat, DataType::kFloat16, DataType::kDouble, DataType::kInt8, DataType::kUInt8, DataType::kInt16,
        DataType::kUInt16, DataType::kInt32, DataType::kUInt32, DataType::kInt64, DataType::kUInt64, DataType::kBool})
    if (descr == fmt::format("'{}'", NpyDescr(dt))) return dt;
  return InvalidArgument(".npy dtype {} is not supported (little-endian numbers and bool only)", descr);
}

// "(2, 3)", "(4,)", "()" -> dims, each checked, with their product.
Expected<Shape> ParseShape(const std::string& text) {
  GE_CHECK(text.size() >= 2 && text.front() == '(' && text.back() == ')', ".npy shape '{}' is not a tuple", text);
  Shape shape;
  int64_t elements = 1;
  size_t i = 1;
  while (i + 1 < text.size()) {
    while (i + 1 < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i + 1 >= text.size()) break;
    int64_t dim = 0;
    size_t digits = 0;
    for (; i + 1 < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) {
      GE_CHECK(dim <= (int64_t{1} << 40), ".npy shape '{}' has an implausible dimension", text);
      dim = dim * 10 + (text[i] - '0');
    }
    GE_CHECK(digits > 0, ".npy shape '{}' is not a tuple of sizes", text);
    GE_CHECK(dim == 0 || elements <= (int64_t{1} << 40) / dim, ".npy shape '{}' is implausibly large", text);
    elements *= dim;
    shape.push_back(dim);
    GE_CHECK(shape.size() <= 32, ".npy shape '{}' has too many dimensions", text);
  }
  return shape;
}

}  // namespace

Expected<Tensor> DecodeNpy(std::string_view bytes) {
  GE_CHECK(bytes.size() >= 10 && bytes.substr(0, 6) == std::string_view("\x93NUMPY", 6), "not a .npy file");
  const int major = static_cast<unsigned char>(bytes[6]);
  GE_CHECK(major >= 1 && major <= 3, ".npy format version {} is not supported", major);
  const size_t prefix = major == 1 ? 10 : 12;
  GE_CHECK(bytes.size() >= prefix, ".npy file is truncated in its header");
  size_t header_len =
      static_cast<unsigned char>(bytes[8]) | (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
  if (major > 1)
    header_len |= (static_cast<size_t>(static_cast<unsigned char>(bytes[10])) << 16) |
                  (static_cast<size_t>(static_cast<unsigned char>(bytes[11])) << 24);
  GE_CHECK(header_len <= 65536 && prefix + header_len <= bytes.size(), ".npy header of {} bytes does not fit the file",
           header_len);
  const std::string_view header = bytes.substr(prefix, header_len);
  const auto descr = HeaderField(header, "descr");
  const auto fortran = HeaderField(header, "fortran_order");
  const auto shape_text = HeaderField(header, "shape");
  GE_CHECK(descr && fortran && shape_text, ".npy header lacks descr, fortran_order or shape: {}", header);
  GE_CHECK(*fortran == "False", ".npy arrays in Fortran order are not supported (save with np.ascontiguousarray)");
  GE_ASSIGN_OR_RETURN(DataType dtype, DtypeOfDescr(*descr));
  GE_ASSIGN_OR_RETURN(Shape shape, ParseShape(*shape_text));
  TensorDesc desc(dtype, std::move(shape));
  const std::string_view data = bytes.substr(prefix + header_len);
  GE_CHECK(static_cast<int64_t>(data.size()) == desc.ByteSize(), ".npy data holds {} bytes, {} has {}", data.size(),
           desc.ToString(), desc.ByteSize());
  Tensor tensor = Tensor::Allocate(desc);
  if (!data.empty()) std::memcpy(tensor.data(), data.data(), data.size());
  return tensor;
}

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
