// float <-> float16 / bfloat16 bit conversions (round to nearest even), for building constants
// and reading low-precision results.
#pragma once

#include <cstdint>
#include <cstring>

namespace ge {

inline uint16_t FloatToBFloat16Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

inline uint16_t FloatToHalfBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (abs < 0x38800000u) {                                               // subnormal or zero
    float magic;
    const uint32_t magic_bits = 0x3f000000u;  // 0.5f: aligns the mantissa for rounding
    std::memcpy(&magic, &magic_bits, 4);
    float v;
    std::memcpy(&v, &abs, 4);
    v += magic;
    uint32_t r;
    std::memcpy(&r, &v, 4);
    return static_cast<uint16_t>(sign | (r - magic_bits));
  }
  const uint32_t mant_odd = (abs >> 13) & 1u;
  uint32_t r = abs + 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
  return static_cast<uint16_t>(sign | (r >> 13));
}

inline float BFloat16BitsToFloat(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  float magnitude;
  if (exp == 0) {
    magnitude = static_cast<float>(mant) * (1.0f / 16777216.0f);  // subnormal: mant * 2^-24
  } else {
    const uint32_t bits = exp == 31 ? (0x7f800000u | (mant << 13)) : (((exp + 112) << 23) | (mant << 13));
    std::memcpy(&magnitude, &bits, 4);
  }
  uint32_t out;
  std::memcpy(&out, &magnitude, 4);
  out |= sign;
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

}  // namespace ge
