// Bit-exact conversions between float32 and the 16-bit float formats GGUF
// stores (IEEE half and bfloat16). Pure integer code, so results do not depend
// on compiler flags or on the CPU having F16C.
#pragma once

#include <cstdint>
#include <cstring>

namespace tessera {

inline float bits_to_f32(uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

inline uint32_t f32_to_bits(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return bits;
}

// IEEE binary16 -> binary32. Exact for every number, subnormals and
// infinities included; a NaN keeps its payload and comes back quiet, as with
// the F16C instruction vcvtph2ps.
inline float fp16_to_fp32(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) {
        const uint32_t quiet = mant != 0 ? 0x400000u : 0u;
        return bits_to_f32(sign | 0x7f800000u | quiet | (mant << 13));
    }
    if (exp != 0) return bits_to_f32(sign | ((exp + 112u) << 23) | (mant << 13));
    if (mant == 0) return bits_to_f32(sign);
    // Subnormal half: normalise into a float32 normal.
    uint32_t e = 113;
    while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --e;
    }
    return bits_to_f32(sign | (e << 23) | ((mant & 0x3ffu) << 13));
}

// binary32 -> binary16 with round-to-nearest-even, the same result as the
// F16C instruction vcvtps2ph: overflow gives infinity, NaN stays a quiet NaN
// keeping the top payload bits.
inline uint16_t fp32_to_fp16(float f) {
    const uint32_t x = f32_to_bits(f);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    const uint32_t abs = x & 0x7fffffffu;
    if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520
    const uint32_t exp = abs >> 23;
    if (exp >= 113) {  // normal half
        uint32_t h = ((exp - 112u) << 10) | ((abs >> 13) & 0x3ffu);
        const uint32_t rem = abs & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
        return static_cast<uint16_t>(sign | h);
    }
    if (exp < 101) return sign;  // below half the smallest subnormal: rounds to zero
    // Subnormal half: value in units of 2^-24 is mant >> (126 - exp).
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exp;
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
}

inline float bf16_to_fp32(uint16_t h) { return bits_to_f32(static_cast<uint32_t>(h) << 16); }

// binary32 -> bfloat16, round-to-nearest-even; NaN becomes a quiet NaN.
inline uint16_t fp32_to_bf16(float f) {
    const uint32_t x = f32_to_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
    return static_cast<uint16_t>((static_cast<uint64_t>(x) + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace tessera
