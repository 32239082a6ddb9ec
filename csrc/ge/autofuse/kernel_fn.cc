#include "ge/autofuse/kernel_fn.h"

#include <vector>

namespace ge::autofuse {
namespace {

const std::vector<KFnInfo>& Table() {
  // {fn, name, unary, binary, reduce, predicate}
  static const std::vector<KFnInfo> table = {
      {KFn::kNone, ""},
      {KFn::kNeg, "neg", true},
      {KFn::kNot, "not", true, false, false, true},
      {KFn::kRelu, "relu", true},
      {KFn::kSigmoid, "sigmoid", true},
      {KFn::kTanh, "tanh", true},
      {KFn::kExp, "exp", true},
      {KFn::kLog, "log", true},
      {KFn::kSqrt, "sqrt", true},
      {KFn::kRsqrt, "rsqrt", true},
      {KFn::kAbs, "abs", true},
      {KFn::kReciprocal, "reciprocal", true},
      {KFn::kSin, "sin", true},
      {KFn::kCos, "cos", true},
      {KFn::kErf, "erf", true},
      {KFn::kExpm1, "expm1", true},
      {KFn::kLog1p, "log1p", true},
      {KFn::kFloor, "floor", true},
      {KFn::kCeil, "ceil", true},
      {KFn::kTrunc, "trunc", true},
      {KFn::kRound, "round", true},
      {KFn::kHardSigmoid, "hardsigmoid", true},
      {KFn::kHardSwish, "hardswish", true},
      {KFn::kGeluTanh, "gelu_tanh", true},
      {KFn::kRoundF16, "round_f16", true},
      {KFn::kRoundBF16, "round_bf16", true},
      {KFn::kAdd, "add", false, true},
      {KFn::kSub, "sub", false, true},
      {KFn::kMul, "mul", false, true},
      {KFn::kDiv, "div", false, true},
      {KFn::kMax, "max", false, true, true},
      {KFn::kMin, "min", false, true, true},
      {KFn::kPow, "pow", false, true},
      {KFn::kLt, "lt", false, true, false, true},
      {KFn::kLe, "le", false, true, false, true},
      {KFn::kGt, "gt", false, true, false, true},
      {KFn::kGe, "ge", false, true, false, true},
      {KFn::kEq, "eq", false, true, false, true},
      {KFn::kNe, "ne", false, true, false, true},
      {KFn::kAnd, "and", false, true, false, true},
      {KFn::kOr, "or", false, true, false, true},
      {KFn::kSum, "sum", false, false, true},
  };
  return table;
}

}  // namespace

const KFnInfo& KFnInfoOf(KFn fn) {
  for (const KFnInfo& info : Table())
    if (info.fn == fn) return info;
  return Table().front();  // kNone: fits no kind, so Verify rejects it
}

std::string_view KFnName(KFn fn) { return KFnInfoOf(fn).name; }

std::optional<KFn> KFnNamed(std::string_view name) {
  for (const KFnInfo& info : Table())
    if (info.fn != KFn::kNone && info.name == name) return info.fn;
  return std::nullopt;
}

}  // namespace ge::autofuse
