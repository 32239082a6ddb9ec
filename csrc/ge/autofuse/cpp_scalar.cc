#include "ge/autofuse/cpp_scalar.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

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

std::string UnaryExpr(KFn f, const std::string& x) {
  const std::string fn(KFnName(f));
  static const std::map<std::string, std::string> kStd = {
      {"tanh", "ge_tanh"},     {"exp", "ge_exp"},          {"log", "std::log"},     {"sqrt", "std::sqrt"},
      {"abs", "std::fabs"},    {"sin", "std::sin"},        {"cos", "std::cos"},     {"erf", "ge_erf"},
      {"expm1", "std::expm1"}, {"log1p", "std::log1p"},    {"floor", "std::floor"}, {"ceil", "std::ceil"},
      {"trunc", "std::trunc"}, {"round", "std::nearbyint"}};
  if (auto it = kStd.find(fn); it != kStd.end()) return fmt::format("{}({})", it->second, x);
  if (fn == "neg") return fmt::format("(-{})", x);
  if (fn == "not") return fmt::format("(!{})", x);
  if (fn == "rsqrt") return fmt::format("(1.f / std::sqrt({}))", x);
  if (fn == "reciprocal") return fmt::format("(1.f / {})", x);
  if (fn == "hardswish") return fmt::format("({0} * ge_hardsigmoid({0}))", x);
  if (fn == "round_f16") return fmt::format("ge_f16_to_f32(ge_f32_to_f16({}))", x);
  if (fn == "round_bf16") return fmt::format("ge_bf16_to_f32(ge_f32_to_bf16({}))", x);
  return fmt::format("ge_{}({})", fn, x);  // relu, sigmoid, hardsigmoid, gelu_tanh
}

std::string BinaryExpr(KFn f, const std::string& a, const std::string& b) {
  const std::string fn(KFnName(f));
  static const std::map<std::string, std::string> kInfix = {{"add", "+"}, {"sub", "-"}, {"mul", "*"},  {"div", "/"},
                                                            {"lt", "<"},  {"le", "<="}, {"gt", ">"},   {"ge", ">="},
                                                            {"eq", "=="}, {"ne", "!="}, {"and", "&&"}, {"or", "||"}};
  if (auto it = kInfix.find(fn); it != kInfix.end()) return fmt::format("({} {} {})", a, it->second, b);
  if (fn == "pow") return fmt::format("std::pow({}, {})", a, b);
  return fmt::format("ge_{}({}, {})", fn, a, b);  // max, min
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
