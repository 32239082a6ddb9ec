// The scalar functions kernel IR applies, declared once: an enum, its spelling (kernel-IR text
// and the generator's names) and which op kinds may use it. KernelIR::Verify checks every op's
// function against that, so an unknown or misplaced function is a Verify error, not a C++
// compile error in a generated file.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ge::autofuse {

enum class KFn : uint8_t {
  kNone,
  // unary
  kNeg,
  kNot,
  kRelu,
  kSigmoid,
  kTanh,
  kExp,
  kLog,
  kSqrt,
  kRsqrt,
  kAbs,
  kReciprocal,
  kSin,
  kCos,
  kErf,
  kExpm1,
  kLog1p,
  kFloor,
  kCeil,
  kTrunc,
  kRound,
  kHardSigmoid,
  kHardSwish,
  kGeluTanh,
  kRoundF16,
  kRoundBF16,  // float -> float16/bfloat16 -> float: where the unfused op stores
  // binary (kMax and kMin also reduce)
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMax,
  kMin,
  kPow,
  kLt,
  kLe,
  kGt,
  kGe,
  kEq,
  kNe,
  kAnd,
  kOr,
  // reductions
  kSum,
};

struct KFnInfo {
  KFn fn;
  std::string_view name;
  bool unary = false;
  bool binary = false;
  bool reduce = false;
  bool predicate = false;  // the result is bool
};

const KFnInfo& KFnInfoOf(KFn fn);
std::string_view KFnName(KFn fn);
std::optional<KFn> KFnNamed(std::string_view name);

}  // namespace ge::autofuse
