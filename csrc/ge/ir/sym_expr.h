// SymExpr: an integer size expression over a graph's symbols ("2*s0", "s1//4+1", "max(s0,8)",
// "s0%8==0"). Dynamo's sizes are sympy expressions; the engine keeps only this small language,
// which it can parse from untrusted model files, print in dumps and evaluate with overflow
// checks. Division and modulo follow Python (floor), as Dynamo's FloorDiv and Mod do;
// comparisons give 0 or 1 (a guard holds when it is not 0).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ge/base/status.h"

namespace ge {

class SymExpr {
 public:
  enum class Op : uint8_t { kConst, kSymbol, kNeg, kAdd, kSub, kMul, kFloorDiv, kMod, kMax, kMin, kEq, kNe, kLt, kLe };
  struct Step {
    Op op;
    int64_t operand;  // kConst: the value; kSymbol: the symbol's index
  };

  SymExpr() = default;  // the constant 0
  static SymExpr Constant(int64_t value) { return SymExpr({Step{Op::kConst, value}}); }
  static SymExpr Symbol(int64_t index) { return SymExpr({Step{Op::kSymbol, index}}); }
  // Parses `text`; identifiers must be in `symbols` (their position is the index).
  static Expected<SymExpr> Parse(std::string_view text, const std::vector<std::string>& symbols);

  // The value for `values` (one per symbol). Overflow, division by zero and a symbol index
  // outside `values` are errors.
  Expected<int64_t> Evaluate(const std::vector<int64_t>& values) const;
  std::string ToString(const std::vector<std::string>& symbols) const;
  bool IsConstant() const { return steps_.size() == 1 && steps_[0].op == Op::kConst; }
  std::optional<int64_t> ConstantValue() const {
    return IsConstant() ? std::optional<int64_t>(steps_[0].operand) : std::nullopt;
  }
  // `a op b` for a binary operator, built for symbolic shape inference: constants fold (unless
  // the result would overflow or divide by zero), and x+0, x-0, x*1, x*0, x//1, (x*c)//c,
  // max(x, x), min(x, x) simplify, so a dim that never varies ends as a constant.
  static SymExpr Combine(Op op, const SymExpr& a, const SymExpr& b);
  // The same steps (so the same value at any sizes; equal values may still be spelled apart).
  bool operator==(const SymExpr& other) const;
  bool operator!=(const SymExpr& other) const { return !(*this == other); }
  // The largest symbol index used, or -1.
  int64_t MaxSymbol() const;
  const std::vector<Step>& steps() const { return steps_; }

 private:
  explicit SymExpr(std::vector<Step> steps) : steps_(std::move(steps)) {}
  std::vector<Step> steps_{Step{Op::kConst, 0}};  // postfix
};

}  // namespace ge
