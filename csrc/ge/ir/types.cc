#include "ge/ir/types.h"

#include <array>
#include <utility>

namespace ge {
namespace {

struct DtypeInfo {
  DataType dtype;
  std::string_view name;
  int64_t size;
};
constexpr std::array<DtypeInfo, 14> kDtypes = {{
    {DataType::kFloat, "DT_FLOAT", 4},
    {DataType::kFloat16, "DT_FLOAT16", 2},
    {DataType::kInt8, "DT_INT8", 1},
    {DataType::kInt32, "DT_INT32", 4},
    {DataType::kUInt8, "DT_UINT8", 1},
    {DataType::kInt16, "DT_INT16", 2},
    {DataType::kUInt16, "DT_UINT16", 2},
    {DataType::kUInt32, "DT_UINT32", 4},
    {DataType::kInt64, "DT_INT64", 8},
    {DataType::kUInt64, "DT_UINT64", 8},
    {DataType::kDouble, "DT_DOUBLE", 8},
    {DataType::kBool, "DT_BOOL", 1},
    {DataType::kBFloat16, "DT_BF16", 2},
    {DataType::kUndefined, "DT_UNDEFINED", 0},
}};

constexpr std::array<std::pair<Format, std::string_view>, 8> kFormats = {{
    {Format::kNCHW, "NCHW"},
    {Format::kNHWC, "NHWC"},
    {Format::kND, "ND"},
    {Format::kNC1HWC0, "NC1HWC0"},
    {Format::kFractalZ, "FRACTAL_Z"},
    {Format::kNCDHW, "NCDHW"},
    {Format::kNDHWC, "NDHWC"},
    {Format::kFractalNZ, "FRACTAL_NZ"},
}};

const DtypeInfo* Find(DataType dtype) {
  for (const auto& info : kDtypes)
    if (info.dtype == dtype) return &info;
  return nullptr;
}

}  // namespace

int64_t DataTypeSize(DataType dtype) {
  const DtypeInfo* info = Find(dtype);
  return info ? info->size : 0;
}

std::string_view DataTypeName(DataType dtype) {
  const DtypeInfo* info = Find(dtype);
  return info ? info->name : "DT_UNKNOWN";
}

Expected<DataType> ParseDataType(std::string_view name) {
  for (const auto& info : kDtypes)
    if (info.name == name) return info.dtype;
  return InvalidArgument("unknown data type '{}'", name);
}

bool IsFloatingPoint(DataType dtype) {
  return dtype == DataType::kFloat || dtype == DataType::kFloat16 || dtype == DataType::kBFloat16 ||
         dtype == DataType::kDouble;
}

bool IsIntegral(DataType dtype) {
  return !IsFloatingPoint(dtype) && dtype != DataType::kBool && dtype != DataType::kUndefined;
}

std::string_view FormatName(Format format) {
  for (const auto& [f, name] : kFormats)
    if (f == format) return name;
  return "UNKNOWN";
}

Expected<Format> ParseFormat(std::string_view name) {
  for (const auto& [f, n] : kFormats)
    if (n == name) return f;
  return InvalidArgument("unknown format '{}'", name);
}

}  // namespace ge
