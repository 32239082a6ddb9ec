// Data types and formats. Enum values follow GE's numbering so dumps read the same.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ge/base/status.h"

namespace ge {

enum class DataType : int32_t {
  kFloat = 0,
  kFloat16 = 1,
  kInt8 = 2,
  kInt32 = 3,
  kUInt8 = 4,
  kInt16 = 6,
  kUInt16 = 7,
  kUInt32 = 8,
  kInt64 = 9,
  kUInt64 = 10,
  kDouble = 11,
  kBool = 12,
  kBFloat16 = 27,
  kUndefined = 28,
};

enum class Format : int32_t {
  kNCHW = 0,
  kNHWC = 1,
  kND = 2,
  kNC1HWC0 = 3,
  kFractalZ = 4,
  kNCDHW = 30,
  kNDHWC = 27,
  kFractalNZ = 29
};

int64_t DataTypeSize(DataType dtype);           // bytes per element; 0 for kUndefined
std::string_view DataTypeName(DataType dtype);  // "DT_FLOAT", ...
Expected<DataType> ParseDataType(std::string_view name);
bool IsFloatingPoint(DataType dtype);
bool IsIntegral(DataType dtype);  // excludes bool

std::string_view FormatName(Format format);  // "ND", "NCHW", ...
Expected<Format> ParseFormat(std::string_view name);

}  // namespace ge
