// Size expressions (the size sites and guards of model files, ge/ir/sym_expr.h): parsing,
// evaluating (overflow and division by zero are errors) and printing back what parses again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ge/ir/sym_expr.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::string> kSymbols = {"s0", "s1", "s2"};
  auto expr = ge::SymExpr::Parse(std::string_view(reinterpret_cast<const char*>(data), size), kSymbols);
  if (!expr.ok()) return 0;
  auto again = ge::SymExpr::Parse(expr->ToString(kSymbols), kSymbols);
  if (!again.ok()) std::abort();  // what prints must parse
  for (const std::vector<int64_t>& values : {std::vector<int64_t>{2, 3, 5}, {INT64_MAX, -1, 0}, {7, -8, 1 << 30}}) {
    auto a = expr->Evaluate(values);
    auto b = again->Evaluate(values);
    if (a.ok() && b.ok() && *a != *b) std::abort();  // and mean the same
  }
  return 0;
}
