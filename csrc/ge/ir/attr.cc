#include "ge/ir/attr.h"

#include <fmt/format.h>

namespace ge {
namespace {

template <typename T>
std::string JoinList(const std::vector<T>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ",";
    if constexpr (std::is_same_v<T, std::string>)
      out += "\"" + values[i] + "\"";
    else
      out += fmt::format("{}", static_cast<T>(values[i]));
  }
  return out + "]";
}

}  // namespace

std::string_view AttrTypeName(AttrType type) {
  static constexpr std::string_view kNames[] = {"int",      "float",      "bool",      "string",      "dtype",
                                                "list_int", "list_float", "list_bool", "list_string", "tensor"};
  return kNames[static_cast<int>(type)];
}

std::string AttrToString(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>)
          return "\"" + x + "\"";
        else if constexpr (std::is_same_v<T, DataType>)
          return std::string(DataTypeName(x));
        else if constexpr (std::is_same_v<T, Tensor>)
          return "tensor " + x.desc().ToString();
        else if constexpr (std::is_same_v<T, bool>)
          return x ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::vector<bool>>) {
          std::string out = "[";
          for (size_t i = 0; i < x.size(); ++i) out += std::string(i ? "," : "") + (x[i] ? "true" : "false");
          return out + "]";
        } else if constexpr (std::is_arithmetic_v<T>)
          return fmt::format("{}", x);
        else
          return JoinList(x);
      },
      v);
}

}  // namespace ge
