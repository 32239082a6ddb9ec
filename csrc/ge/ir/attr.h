// Attribute values. Real numbers are stored as double so that framework values such as
// eps=1e-5 reach the kernels unrounded.
#pragma once

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "ge/ir/tensor.h"

namespace ge {

using AttrValue = std::variant<int64_t, double, bool, std::string, DataType, std::vector<int64_t>, std::vector<double>,
                               std::vector<bool>, std::vector<std::string>, Tensor>;

// In the same order as the variant alternatives.
enum class AttrType { kInt, kFloat, kBool, kString, kDataType, kListInt, kListFloat, kListBool, kListString, kTensor };

using AttrMap = std::map<std::string, AttrValue>;

inline AttrType TypeOf(const AttrValue& v) { return static_cast<AttrType>(v.index()); }
std::string_view AttrTypeName(AttrType type);
std::string AttrToString(const AttrValue& v);

template <typename T>
Expected<T> GetAttr(const AttrMap& attrs, const std::string& name) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return NotFound("attribute '{}' is not set", name);
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  return InvalidArgument("attribute '{}' is {}, not the requested type", name, AttrTypeName(TypeOf(it->second)));
}

template <typename T>
T GetAttrOr(const AttrMap& attrs, const std::string& name, T fallback) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return fallback;
  const T* v = std::get_if<T>(&it->second);
  return v ? *v : fallback;
}

}  // namespace ge
