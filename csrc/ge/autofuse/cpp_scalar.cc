#include "ge/autofuse/cpp_scalar.h"

#include <fmt/format.h>

#include <cmath>

namespace ge::autofuse {

// Scalar helpers the kernels call; all inline, so loop bodies end up call-free except for the
// transcendental libm functions.
const char* const kScalarPrelude = R"(
#include <cmath>
#include <cstdint>
#include <cstring>

namespace {
inline float ge_f16_to_f32(uint16_t h) { _Float16 f; std::memcpy(&f, &h, 2); return static_cast<float>(f); }
inline uint16_t ge_f32_to_f16(float x) { _Float16 f = static_cast<_Float16>(x); uint16_t h; std::memcpy(&h, &f, 2); return h; }
inline float ge_bf16_to_f32(uint16_t h) { uint32_t u = static_cast<uint32_t>(h) << 16; float f; std::memcpy(&f, &u, 4); return f; }
inline uint16_t ge_f32_to_bf16(float x) {  // round to nearest even, as torch does
  uint32_t u; std::memcpy(&u, &x, 4);
  if (x != x) return 0x7FC0;
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
inline float ge_relu(float x) { return x < 0.f ? 0.f : x; }
// NaN-propagating, written as selects on one compare each so that they vectorize without branches.
inline float ge_max(float a, float b) { float m = a > b ? a : b; m = b != b ? b : m; return a != a ? a : m; }
inline float ge_min(float a, float b) { float m = a < b ? a : b; m = b != b ? b : m; return a != a ? a : m; }
inline float ge_bits_to_float(int32_t b) { float f; std::memcpy(&f, &b, 4); return f; }
// Fused multiply-add where the target has it (polynomials only: the kernels' own arithmetic is
// compiled with -ffp-contract=off so that it rounds like the unfused ops do).
#ifdef __FMA__
inline float ge_fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
#else
inline float ge_fma(float a, float b, float c) { return a * b + c; }
#endif
// exp without a libm call, so loops over it vectorize: Cody-Waite reduction x = n ln2 + r,
// a degree-6 polynomial for e^r on |r| <= ln2/2 (Cephes' expf coefficients, ~1.3 ulp), and 2^n
// from exponent bits in two halves (so results stay right down to the denormals; below the
// clamp they round to 0). NaN propagates through the arithmetic; above ln(FLT_MAX) it is inf.
inline float ge_exp(float x) {
  const float hi = 88.7228394f;
  float c = x > hi ? hi : x;
  c = c < -104.5f ? -104.5f : c;
  // Round to nearest by adding and removing 1.5 * 2^23 (|t| < 2^22 here): unlike floor, this
  // vectorizes without -fno-trapping-math.
  const float n = (c * 1.44269504088896341f + 12582912.f) - 12582912.f;
  float r = ge_fma(n, -0.693359375f, c);
  r = ge_fma(n, 2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = ge_fma(p, r, 1.3981999507e-3f);
  p = ge_fma(p, r, 8.3334519073e-3f);
  p = ge_fma(p, r, 4.1665795894e-2f);
  p = ge_fma(p, r, 1.6666665459e-1f);
  p = ge_fma(p, r, 5.0000001201e-1f);
  const float y = ge_fma(p * r, r, r) + 1.f;
  const int32_t k = static_cast<int32_t>(n), k1 = k >> 1, k2 = k - k1;
  const float v = y * ge_bits_to_float((k1 + 127) << 23) * ge_bits_to_float((k2 + 127) << 23);
  return x > hi ? INFINITY : v;
}
// tanh: an odd polynomial near 0 (Cephes' tanhf), 1 - 2 / (e^2|x| + 1) elsewhere.
inline float ge_tanh(float x) {
  const float ax = x < 0.f ? -x : x, z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = x + x * z * p;
  const float big = 1.f - 2.f / (ge_exp(2.f * ax) + 1.f);
  return ax < 0.625f ? small : (x < 0.f ? -big : big);
}
inline float ge_sigmoid(float x) { return 1.f / (1.f + ge_exp(-x)); }
inline float ge_hardsigmoid(float x) { return ge_min(ge_max(x + 3.f, 0.f), 6.f) / 6.f; }
// erf as ATen's vectorized CPU kernels compute it (Abramowitz & Stegun 7.1.26, |error| < 1.5e-7),
// call-free so that GELU loops vectorize.
inline float ge_erf(float x) {
  const float ax = x < 0.f ? -x : x;
  const float t = 1.f / (1.f + 0.3275911f * ax);
  const float r = ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t + 0.254829592f) * t;
  const float y = 1.f - r * ge_exp(-ax * ax);
  return x < 0.f ? -y : y;
}
// A float sum of block kernels in a cascade over 16 lanes: each block's lane sums go into a
// level that takes 16 blocks, that one into a level that takes 16 of those, and so on, so
// every partial sum adds values of similar size (accuracy comparable to ATen's cascade sum).
struct GeBlockSum {
  float l1[16] = {}, l2[16] = {}, l3[16] = {};
  int64_t n = 0;
  inline void add(float* acc) {
    for (int l = 0; l < 16; ++l) { l1[l] += acc[l]; acc[l] = 0.f; }
    if ((++n & 15) != 0) return;
    for (int l = 0; l < 16; ++l) { l2[l] += l1[l]; l1[l] = 0.f; }
    if ((n & 255) != 0) return;
    for (int l = 0; l < 16; ++l) { l3[l] += l2[l]; l2[l] = 0.f; }
  }
  inline void total(float* acc) const {
    for (int l = 0; l < 16; ++l) acc[l] = l3[l] + (l2[l] + (l1[l] + acc[l]));
  }
};
inline float ge_gelu_tanh(float x) {
  return 0.5f * x * (1.f + ge_tanh(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
}
}  // namespace
)";

std::string FloatLiteral(double v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
  return fmt::format("{:.9g}f", static_cast<float>(v)).find_first_of(".en") == std::string::npos
             ? fmt::format("{:.9g}.f", static_cast<float>(v))
             : fmt::format("{:.9g}f", static_cast<float>(v));
}

const char* CType(ScalarType t) {
  switch (t) {
    case ScalarType::kFloat: return "float";
    case ScalarType::kBool: return "bool";
    case ScalarType::kInt64: return "int64_t";
  }
  return "?";
}

const char* StorageCType(DataType t) {
  switch (t) {
    case DataType::kFloat: return "float";
    case DataType::kFloat16:
    case DataType::kBFloat16: return "uint16_t";
    case DataType::kBool: return "uint8_t";
    case DataType::kInt32: return "int32_t";
    case DataType::kInt64: return "int64_t";
    default: return "void";
  }
}

std::string LoadExpr(DataType t, const std::string& ptr, const std::string& index) {
  const std::string at = fmt::format("{}[{}]", ptr, index);
  switch (t) {
    case DataType::kFloat16: return fmt::format("ge_f16_to_f32({})", at);
    case DataType::kBFloat16: return fmt::format("ge_bf16_to_f32({})", at);
    case DataType::kBool: return fmt::format("({} != 0)", at);
    case DataType::kInt32: return fmt::format("static_cast<int64_t>({})", at);
    default: return at;
  }
}

std::string StoreValue(DataType t, const std::string& v) {
  switch (t) {
    case DataType::kFloat16: return fmt::format("ge_f32_to_f16({})", v);
    case DataType::kBFloat16: return fmt::format("ge_f32_to_bf16({})", v);
    case DataType::kBool: return fmt::format("static_cast<uint8_t>({} ? 1 : 0)", v);
    default: return v;
  }
}

// Every function has one spelling here; a switch without default makes the compiler name any
// KFn that lacks one (-Wswitch).
std::string UnaryExpr(KFn fn, const std::string& x) {
  const auto call = [&x](const char* f) { return fmt::format("{}({})", f, x); };
  switch (fn) {
    case KFn::kTanh: return call("ge_tanh");
    case KFn::kExp: return call("ge_exp");
    case KFn::kLog: return call("std::log");
    case KFn::kSqrt: return call("std::sqrt");
    case KFn::kAbs: return call("std::fabs");
    case KFn::kSin: return call("std::sin");
    case KFn::kCos: return call("std::cos");
    case KFn::kErf: return call("ge_erf");
    case KFn::kExpm1: return call("std::expm1");
    case KFn::kLog1p: return call("std::log1p");
    case KFn::kFloor: return call("std::floor");
    case KFn::kCeil: return call("std::ceil");
    case KFn::kTrunc: return call("std::trunc");
    case KFn::kRound: return call("std::nearbyint");
    case KFn::kRelu: return call("ge_relu");
    case KFn::kSigmoid: return call("ge_sigmoid");
    case KFn::kHardSigmoid: return call("ge_hardsigmoid");
    case KFn::kGeluTanh: return call("ge_gelu_tanh");
    case KFn::kNeg: return fmt::format("(-{})", x);
    case KFn::kNot: return fmt::format("(!{})", x);
    case KFn::kRsqrt: return fmt::format("(1.f / std::sqrt({}))", x);
    case KFn::kReciprocal: return fmt::format("(1.f / {})", x);
    case KFn::kHardSwish: return fmt::format("({0} * ge_hardsigmoid({0}))", x);
    case KFn::kRoundF16: return fmt::format("ge_f16_to_f32(ge_f32_to_f16({}))", x);
    case KFn::kRoundBF16: return fmt::format("ge_bf16_to_f32(ge_f32_to_bf16({}))", x);
    case KFn::kNone:
    case KFn::kAdd:
    case KFn::kSub:
    case KFn::kMul:
    case KFn::kDiv:
    case KFn::kMax:
    case KFn::kMin:
    case KFn::kPow:
    case KFn::kLt:
    case KFn::kLe:
    case KFn::kGt:
    case KFn::kGe:
    case KFn::kEq:
    case KFn::kNe:
    case KFn::kAnd:
    case KFn::kOr:
    case KFn::kSum: break;
  }
  return fmt::format("/* not unary: {} */", KFnName(fn));  // KernelIR::Verify rejects it first
}

std::string BinaryExpr(KFn fn, const std::string& a, const std::string& b) {
  const auto infix = [&](const char* op) { return fmt::format("({} {} {})", a, op, b); };
  switch (fn) {
    case KFn::kAdd: return infix("+");
    case KFn::kSub: return infix("-");
    case KFn::kMul: return infix("*");
    case KFn::kDiv: return infix("/");
    case KFn::kLt: return infix("<");
    case KFn::kLe: return infix("<=");
    case KFn::kGt: return infix(">");
    case KFn::kGe: return infix(">=");
    case KFn::kEq: return infix("==");
    case KFn::kNe: return infix("!=");
    case KFn::kAnd: return infix("&&");
    case KFn::kOr: return infix("||");
    case KFn::kPow: return fmt::format("std::pow({}, {})", a, b);
    case KFn::kMax: return fmt::format("ge_max({}, {})", a, b);
    case KFn::kMin: return fmt::format("ge_min({}, {})", a, b);
    case KFn::kNone:
    case KFn::kNeg:
    case KFn::kNot:
    case KFn::kRelu:
    case KFn::kSigmoid:
    case KFn::kTanh:
    case KFn::kExp:
    case KFn::kLog:
    case KFn::kSqrt:
    case KFn::kRsqrt:
    case KFn::kAbs:
    case KFn::kReciprocal:
    case KFn::kSin:
    case KFn::kCos:
    case KFn::kErf:
    case KFn::kExpm1:
    case KFn::kLog1p:
    case KFn::kFloor:
    case KFn::kCeil:
    case KFn::kTrunc:
    case KFn::kRound:
    case KFn::kHardSigmoid:
    case KFn::kHardSwish:
    case KFn::kGeluTanh:
    case KFn::kRoundF16:
    case KFn::kRoundBF16:
    case KFn::kSum: break;
  }
  return fmt::format("/* not binary: {} */", KFnName(fn));
}

std::string Combine(KFn fn, const std::string& acc, const std::string& v) {
  if (fn == KFn::kSum) return fmt::format("{} + {}", acc, v);
  return fmt::format("ge_{}({}, {})", KFnName(fn), acc, v);
}

const char* ReduceInit(KFn fn) {
  if (fn == KFn::kSum) return "0.f";
  if (fn == KFn::kMax) return "(-INFINITY)";
  return "INFINITY";
}

}  // namespace ge::autofuse
