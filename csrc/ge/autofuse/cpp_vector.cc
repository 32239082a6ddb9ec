#include "ge/autofuse/cpp_vector.h"

#include <fmt/format.h>

#include "ge/autofuse/cpp_scalar.h"

namespace ge::autofuse {

// xsimd picks the widest instruction set the compiler targets (-march=native): AVX-512 lanes
// of 16 floats where the CPU has them, AVX2's 8 elsewhere. A missing header is a compile
// error that names the package; the stage then falls back to block kernels (autofuse_stage.cc).
#define GE_MISSING_XSIMD "torchair_ge vector kernels need the xsimd headers (Debian/Ubuntu: apt install libxsimd-dev)"
const char* const kMissingVectorLibrary = GE_MISSING_XSIMD;

const char* const kVectorPrelude = "\n#if !__has_include(<xsimd/xsimd.hpp>)\n#error \"" GE_MISSING_XSIMD R"prelude("
#endif
#include <xsimd/xsimd.hpp>

namespace {
using GeV = xsimd::batch<float>;
using GeB = xsimd::batch_bool<float>;
using GeI = xsimd::batch<int32_t>;  // element offsets, one per lane (gathers and scatters)
constexpr int kGeW = static_cast<int>(GeV::size);

// Lanes built one scalar at a time (strided reads, conversions): the compiler vectorizes the
// plain loops where the target allows.
template <class F> inline GeV ge_vgen(F f) {
  alignas(64) float t[kGeW];
  for (int l = 0; l < kGeW; ++l) t[l] = f(l);
  return GeV::load_aligned(t);
}
// Flags gathered lane by lane (strided reads), converted to 0/1 without a branch per lane and
// compared once as a vector.
template <class F> inline GeB ge_vgen_mask(F f) {
  return ge_vgen([&](int l) { return static_cast<float>(f(l)); }) != GeV(0.f);
}
template <class F> inline GeV ge_vmap(GeV x, F f) {
  alignas(64) float t[kGeW];
  x.store_aligned(t);
  for (int l = 0; l < kGeW; ++l) t[l] = f(t[l]);
  return GeV::load_aligned(t);
}
template <class F> inline GeV ge_vmap2(GeV x, GeV y, F f) {
  alignas(64) float a[kGeW], b[kGeW];
  x.store_aligned(a);
  y.store_aligned(b);
  for (int l = 0; l < kGeW; ++l) a[l] = f(a[l], b[l]);
  return GeV::load_aligned(a);
}
inline GeV ge_vload_f16(const uint16_t* p) { return ge_vgen([&](int l) { return ge_f16_to_f32(p[l]); }); }
inline GeV ge_vload_bf16(const uint16_t* p) { return ge_vgen([&](int l) { return ge_bf16_to_f32(p[l]); }); }
// Bytes widened to lanes in registers (a byte at a time, the lanes cost more than the select
// they feed: a causal mask's softmax ran 1.7x the unmasked one).
inline GeB ge_vload_bool(const uint8_t* p) {
#if XSIMD_WITH_AVX512F
  const __m512i lanes = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return GeB(_mm512_cmpneq_epi32_mask(lanes, _mm512_setzero_si512()));
#elif XSIMD_WITH_AVX2
  const __m256i lanes = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  return GeB(_mm256_castsi256_ps(_mm256_cmpgt_epi32(lanes, _mm256_setzero_si256())));
#else
  return ge_vgen([&](int l) { return static_cast<float>(p[l]); }) != GeV(0.f);
#endif
}
template <class F> inline void ge_vput(GeV v, F f) {
  alignas(64) float t[kGeW];
  v.store_aligned(t);
  for (int l = 0; l < kGeW; ++l) f(l, t[l]);
}
inline void ge_vstore_f16(uint16_t* p, GeV v) { ge_vput(v, [&](int l, float x) { p[l] = ge_f32_to_f16(x); }); }
inline void ge_vstore_bf16(uint16_t* p, GeV v) { ge_vput(v, [&](int l, float x) { p[l] = ge_f32_to_bf16(x); }); }
inline void ge_vstore_bool(uint8_t* p, GeB b) {
  ge_vput(xsimd::select(b, GeV(1.f), GeV(0.f)), [&](int l, float x) { p[l] = x != 0.f; });
}

// NaN-propagating max/min. On x86 xsimd's max(a, b)/min(a, b) are the instructions, which give
// b when either operand is NaN: that covers a NaN b, one select covers a NaN a.
inline GeV ge_vmax(GeV a, GeV b) { return xsimd::select(xsimd::isnan(a), a, xsimd::max(a, b)); }
inline GeV ge_vmin(GeV a, GeV b) { return xsimd::select(xsimd::isnan(a), a, xsimd::min(a, b)); }
inline GeV ge_vrelu(GeV x) { return xsimd::max(GeV(0.f), x); }  // NaN (and -0) stay as they are
inline GeV ge_vsigmoid(GeV x) { return GeV(1.f) / (GeV(1.f) + xsimd::exp(-x)); }
inline GeV ge_vhardsigmoid(GeV x) { return ge_vmin(ge_vmax(x + GeV(3.f), GeV(0.f)), GeV(6.f)) / GeV(6.f); }
inline GeV ge_vgelu_tanh(GeV x) {
  const GeV inner = GeV(0.79788456080286535588f) * (x + GeV(0.044715f) * x * x * x);
  return GeV(0.5f) * x * (GeV(1.f) + xsimd::tanh(inner));
}

// a + b and a - b as a multiply-add by one: the same value and rounding (a * 1 is exact), on
// the multiply pipes. Where a CPU has add pipes apart from its multiply/FMA pipes (AMD's Zen: two
// of each), a chain of adds, subtracts, max and multiplies runs at the pace of its busier pair;
// some adds moved to the multipliers even them out (AddsForTheMultiplier). Where adds issue to
// the FMA ports anyway (Intel's cores) it changes nothing. The one is hidden from the compiler,
// which would otherwise fold the product away and give the add back.
#if XSIMD_WITH_AVX512F || XSIMD_WITH_FMA3_AVX
inline GeV ge_vone() {
  GeV one(1.f);
  __asm__("" : "+v"(one.data));
  return one;
}
#endif
#if XSIMD_WITH_AVX512F
inline GeV ge_vadd_fma(GeV a, GeV b) { return _mm512_fmadd_ps(a, ge_vone(), b); }
inline GeV ge_vsub_fma(GeV a, GeV b) { return _mm512_fnmadd_ps(b, ge_vone(), a); }
#elif XSIMD_WITH_FMA3_AVX
inline GeV ge_vadd_fma(GeV a, GeV b) { return _mm256_fmadd_ps(a, ge_vone(), b); }
inline GeV ge_vsub_fma(GeV a, GeV b) { return _mm256_fnmadd_ps(b, ge_vone(), a); }
#else
inline GeV ge_vadd_fma(GeV a, GeV b) { return a + b; }
inline GeV ge_vsub_fma(GeV a, GeV b) { return a - b; }
#endif

// Rounding to bfloat16 and back, as ge_f32_to_bf16 does (to nearest even; NaN stays NaN).
inline GeV ge_vround_bf16(GeV x) {
  using U = xsimd::batch<uint32_t>;
  U u = xsimd::bitwise_cast<U>(x);
  u = (u + (U(0x7FFFu) + ((u >> 16) & U(1u)))) & U(0xFFFF0000u);
  return xsimd::select(xsimd::isnan(x), x, xsimd::bitwise_cast<GeV>(u));
}
// Rounding to float16 and back: the conversion instructions where the vector has their width.
inline GeV ge_vround_f16(GeV x) {
#if XSIMD_WITH_AVX512F
  return GeV(_mm512_cvtph_ps(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
#elif XSIMD_WITH_AVX && defined(__F16C__)
  return GeV(_mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
#else
  return ge_vmap(x, [](float t) { return ge_f16_to_f32(ge_f32_to_f16(t)); });
#endif
}

// Lanes folded pairwise (log2(kGeW) dependent steps): lane l takes f(lane l, lane l + n) for
// n = kGeW/2 .. 1, so lane 0 ends with the whole fold. `f` is the vector combine. In registers
// with lane shuffles on AVX-512 and AVX (a fold through memory cost more than the rest of a
// 128-wide softmax row); the same pairs in the same order everywhere, so the same numbers.
template <class F> inline float ge_vfold(GeV v, F f) {
#if XSIMD_WITH_AVX512F
  __m512 x = v;
  x = f(GeV(x), GeV(_mm512_shuffle_f32x4(x, x, _MM_SHUFFLE(1, 0, 3, 2))));
  x = f(GeV(x), GeV(_mm512_shuffle_f32x4(x, x, _MM_SHUFFLE(2, 3, 0, 1))));
  x = f(GeV(x), GeV(_mm512_permute_ps(x, _MM_SHUFFLE(1, 0, 3, 2))));
  x = f(GeV(x), GeV(_mm512_permute_ps(x, _MM_SHUFFLE(2, 3, 0, 1))));
  return _mm512_cvtss_f32(x);
#elif XSIMD_WITH_AVX
  __m256 x = v;
  x = f(GeV(x), GeV(_mm256_permute2f128_ps(x, x, 1)));
  x = f(GeV(x), GeV(_mm256_permute_ps(x, _MM_SHUFFLE(1, 0, 3, 2))));
  x = f(GeV(x), GeV(_mm256_permute_ps(x, _MM_SHUFFLE(2, 3, 0, 1))));
  return _mm256_cvtss_f32(x);
#else
  alignas(64) float t[kGeW];
  for (int n = kGeW / 2; n > 0; n /= 2) {
    v.store_aligned(t);
    v = f(v, ge_vgen([&](int l) { return t[l + n < kGeW ? l + n : l]; }));
  }
  v.store_aligned(t);
  return t[0];
#endif
}

// A float sum in a cascade: four accumulators (one per unrolled vector) take 16 steps each,
// then go into a level that takes 16 of those, and so on: every partial sum adds values of
// similar size, so the error grows with the number of levels, not with the row's length
// (a single accumulator per lane stops growing once it is 2^24 times its addends).
struct GeSum {
  GeV a0 = GeV(0.f), a1 = GeV(0.f), a2 = GeV(0.f), a3 = GeV(0.f);
  GeV l1 = GeV(0.f), l2 = GeV(0.f), l3 = GeV(0.f);
  int64_t n = 0;
  inline void step() {
    if ((++n & 15) != 0) return;
    l1 = l1 + ((a0 + a1) + (a2 + a3));
    a0 = a1 = a2 = a3 = GeV(0.f);
    if ((n & 255) != 0) return;
    l2 = l2 + l1;
    l1 = GeV(0.f);
    if ((n & 4095) != 0) return;
    l3 = l3 + l2;
    l2 = GeV(0.f);
  }
  inline GeV total() const { return l3 + (l2 + (l1 + ((a0 + a1) + (a2 + a3)))); }
};
}  // namespace
)prelude";
#undef GE_MISSING_XSIMD

bool VectorStorage(DataType t) {
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBFloat16 || t == DataType::kBool;
}

bool Vectorizable(const KernelIR& k) {
  for (const KOp& op : k.ops) {
    if (op.row) continue;
    if (op.type == ScalarType::kInt64 || op.kind == OpKind::kConcat) return false;
    if (op.kind == OpKind::kLoad && !VectorStorage(k.inputs[static_cast<size_t>(op.buffer)].desc.dtype)) return false;
  }
  for (const KStore& st : k.stores) {
    const KOp& op = k.ops[static_cast<size_t>(st.op)];
    if (!VectorStorage(k.outputs[static_cast<size_t>(st.output)].desc.dtype) || op.type == ScalarType::kInt64)
      return false;
  }
  return true;
}

int TargetVectorRegisters() {
#if defined(__x86_64__)
  static const int registers = __builtin_cpu_supports("avx512f") ? 32 : 16;
  return registers;
#else
  return 32;  // aarch64's NEON and SVE
#endif
}

int TargetFloatLanes() {
#if defined(__x86_64__)
  static const int lanes = __builtin_cpu_supports("avx512f") ? 16 : __builtin_cpu_supports("avx") ? 8 : 4;
  return lanes;
#else
  return 4;   // NEON's 128 bits
#endif
}

const char* VType(ScalarType t) { return t == ScalarType::kBool ? "GeB" : "GeV"; }

std::string VBroadcast(ScalarType t, const std::string& scalar) { return fmt::format("{}({})", VType(t), scalar); }

std::string VLoad(DataType t, const std::string& pointer) {
  switch (t) {
    case DataType::kFloat16: return fmt::format("ge_vload_f16({})", pointer);
    case DataType::kBFloat16: return fmt::format("ge_vload_bf16({})", pointer);
    case DataType::kBool: return fmt::format("ge_vload_bool({})", pointer);
    default: return fmt::format("GeV::load_unaligned({})", pointer);
  }
}

std::string VStore(DataType t, const std::string& pointer, const std::string& v) {
  switch (t) {
    case DataType::kFloat16: return fmt::format("ge_vstore_f16({}, {});", pointer, v);
    case DataType::kBFloat16: return fmt::format("ge_vstore_bf16({}, {});", pointer, v);
    case DataType::kBool: return fmt::format("ge_vstore_bool({}, {});", pointer, v);
    default: return fmt::format("({}).store_unaligned({});", v, pointer);
  }
}

std::string VGather(DataType t, const std::string& element_of_l) {
  return fmt::format("{}([&](int l) {{ return {}; }})", t == DataType::kBool ? "ge_vgen_mask" : "ge_vgen",
                     element_of_l);
}

std::string VUnary(KFn fn, const std::string& x) {
  const auto call = [&x](const char* f) { return fmt::format("{}({})", f, x); };
  switch (fn) {
    case KFn::kTanh: return call("xsimd::tanh");
    case KFn::kExp: return call("xsimd::exp");
    case KFn::kLog: return call("xsimd::log");
    case KFn::kSqrt: return call("xsimd::sqrt");
    case KFn::kAbs: return call("xsimd::abs");
    case KFn::kSin: return call("xsimd::sin");
    case KFn::kCos: return call("xsimd::cos");
    case KFn::kErf: return call("xsimd::erf");
    case KFn::kExpm1: return call("xsimd::expm1");
    case KFn::kLog1p: return call("xsimd::log1p");
    case KFn::kFloor: return call("xsimd::floor");
    case KFn::kCeil: return call("xsimd::ceil");
    case KFn::kTrunc: return call("xsimd::trunc");
    case KFn::kRound: return call("xsimd::nearbyint");
    case KFn::kRelu: return call("ge_vrelu");
    case KFn::kSigmoid: return call("ge_vsigmoid");
    case KFn::kHardSigmoid: return call("ge_vhardsigmoid");
    case KFn::kGeluTanh: return call("ge_vgelu_tanh");
    case KFn::kNeg: return fmt::format("(-{})", x);
    case KFn::kNot: return fmt::format("(!{})", x);
    case KFn::kRsqrt: return fmt::format("(GeV(1.f) / xsimd::sqrt({}))", x);
    case KFn::kReciprocal: return fmt::format("(GeV(1.f) / {})", x);
    case KFn::kHardSwish: return fmt::format("({0} * ge_vhardsigmoid({0}))", x);
    case KFn::kRoundF16: return call("ge_vround_f16");
    case KFn::kRoundBF16: return call("ge_vround_bf16");
    default: break;
  }
  return UnaryExpr(fn, x);  // not unary: KernelIR::Verify rejects it first
}

// xsimd overloads the infix operators (comparisons give masks, && and || combine masks), so only
// the functions differ from the scalar spellings.
std::string VBinary(KFn fn, const std::string& a, const std::string& b) {
  switch (fn) {
    case KFn::kPow: return fmt::format("ge_vmap2({}, {}, [](float x, float y) {{ return std::pow(x, y); }})", a, b);
    case KFn::kMax: return fmt::format("ge_vmax({}, {})", a, b);
    case KFn::kMin: return fmt::format("ge_vmin({}, {})", a, b);
    default: return BinaryExpr(fn, a, b);
  }
}

std::string VBinaryOnTheMultiplier(KFn fn, const std::string& a, const std::string& b) {
  return fmt::format("{}({}, {})", fn == KFn::kSub ? "ge_vsub_fma" : "ge_vadd_fma", a, b);
}

namespace {

// The pipes an element float op issues to on a CPU with separate add and multiply pipes.
enum class FpPipe { kMultiply, kAdd, kEither, kOther };

FpPipe PipeOf(const KOp& op) {
  if (op.kind == OpKind::kUnary) return op.fn == KFn::kRelu ? FpPipe::kAdd : FpPipe::kOther;
  if (op.kind != OpKind::kBinary) return FpPipe::kOther;
  switch (op.fn) {
    case KFn::kMul: return FpPipe::kMultiply;
    case KFn::kAdd:
    case KFn::kSub: return op.type == ScalarType::kFloat ? FpPipe::kEither : FpPipe::kOther;
    case KFn::kMax:
    case KFn::kMin:
    case KFn::kLt:
    case KFn::kLe:
    case KFn::kGt:
    case KFn::kGe:
    case KFn::kEq:
    case KFn::kNe: return FpPipe::kAdd;
    default: return FpPipe::kOther;
  }
}

}  // namespace

std::set<int> AddsForTheMultiplier(const KernelIR& k, const std::vector<int>& ops) {
  std::set<int> moved;
  int multiplies = 0, adds = 0;
  for (int id : ops) {
    const KOp& op = k.ops[static_cast<size_t>(id)];
    if (op.row) continue;  // a scalar, once per row
    switch (PipeOf(op)) {
      case FpPipe::kMultiply: ++multiplies; break;
      case FpPipe::kAdd: ++adds; break;
      case FpPipe::kEither:
        if (adds > multiplies) {
          moved.insert(id);
          ++multiplies;
        } else {
          ++adds;
        }
        break;
      case FpPipe::kOther: break;
    }
  }
  return moved;
}

std::string VSelect(ScalarType t, const std::string& c, const std::string& a, const std::string& b) {
  if (t == ScalarType::kBool) return fmt::format("(({0} && {1}) || (!{0} && {2}))", c, a, b);
  return fmt::format("xsimd::select({}, {}, {})", c, a, b);
}

std::string VCast(ScalarType from, ScalarType to, const std::string& x) {
  if (from == to) return x;
  if (to == ScalarType::kBool) return fmt::format("({} != GeV(0.f))", x);
  return fmt::format("xsimd::select({}, GeV(1.f), GeV(0.f))", x);
}

std::string VCombine(KFn fn, const std::string& acc, const std::string& v) {
  if (fn == KFn::kSum) return fmt::format("{} + {}", acc, v);
  return fmt::format("ge_v{}({}, {})", KFnName(fn), acc, v);
}

std::string VFold(KFn fn, const std::string& v) {
  return fmt::format("ge_vfold({}, [](GeV a, GeV b) {{ return {}; }})", v, VCombine(fn, "a", "b"));
}

int VCost(const KOp& op) {
  switch (op.kind) {
    case OpKind::kLoad:
    case OpKind::kConst:
    case OpKind::kSelect:
    case OpKind::kCast: return 1;
    case OpKind::kConcat: return 4;
    case OpKind::kReduce: return 1;
    case OpKind::kBinary:
      if (op.fn == KFn::kPow) return 60;
      return op.fn == KFn::kDiv ? 4 : (op.fn == KFn::kMax || op.fn == KFn::kMin) ? 3 : 1;
    case OpKind::kUnary: break;
  }
  switch (op.fn) {
    case KFn::kRelu: return 1;
    case KFn::kNeg:
    case KFn::kNot:
    case KFn::kAbs:
    case KFn::kFloor:
    case KFn::kCeil:
    case KFn::kTrunc:
    case KFn::kRound: return 2;
    case KFn::kSqrt:
    case KFn::kRsqrt:
    case KFn::kReciprocal: return 6;
    case KFn::kHardSigmoid:
    case KFn::kHardSwish: return 12;
    case KFn::kRoundF16:
    case KFn::kRoundBF16: return 4;
    default: return 25;  // exp, log, tanh, erf, sigmoid, sin, ...: a polynomial and a range reduction
  }
}

}  // namespace ge::autofuse
