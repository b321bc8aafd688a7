// The exact on-disk block layouts of GGUF's quantized types (what ggml calls
// block_q4_0 and friends). Shared by the scalar reference code in tensor/ and
// the SIMD kernels in kernels/, which read the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tessera {

inline constexpr int kQK = 32;    // elements per legacy block (Q4_0 .. Q8_1)
inline constexpr int kQKK = 256;  // elements per K-quant super-block

struct BlockQ4_0 {
    uint16_t d;           // fp16 scale
    uint8_t qs[kQK / 2];  // element j in low nibble of qs[j], j+16 in high nibble
};
struct BlockQ4_1 {
    uint16_t d;  // fp16 scale
    uint16_t m;  // fp16 minimum
    uint8_t qs[kQK / 2];
};
struct BlockQ5_0 {
    uint16_t d;
    uint8_t qh[4];  // bit j = fifth bit of element j
    uint8_t qs[kQK / 2];
};
struct BlockQ5_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qh[4];
    uint8_t qs[kQK / 2];
};
struct BlockQ8_0 {
    uint16_t d;
    int8_t qs[kQK];
};
struct BlockQ8_1 {
    uint16_t d;  // fp16 scale
    uint16_t s;  // fp16 of d * sum(qs)
    int8_t qs[kQK];
};
struct BlockQ2_K {
    uint8_t scales[kQKK / 16];  // per 16 elements: 4-bit scale (low), 4-bit min (high)
    uint8_t qs[kQKK / 4];       // 2 bits each: element 128h + 32j + l at bits 2j of qs[32h + l]
    uint16_t d;                 // fp16 super-block scale for the scales
    uint16_t dmin;              // fp16 super-block scale for the mins
};
struct BlockQ3_K {
    uint8_t hmask[kQKK / 8];  // bit e / 32 of hmask[e % 32] set: element e has no -4 offset
    uint8_t qs[kQKK / 4];     // low 2 bits, laid out as Q2_K's
    uint8_t scales[12];       // 16 6-bit scales (stored + 32), packed (q3k_scale)
    uint16_t d;               // fp16 super-block scale
};
struct BlockQ4_K {
    uint16_t d;                  // fp16 super-block scale for the 6-bit scales
    uint16_t dmin;               // fp16 super-block scale for the 6-bit mins
    uint8_t scales[12];          // 8 scales and 8 mins, 6 bits each, packed
    uint8_t qs[kQKK / 2];        // 4 chunks of 64: low nibbles then high nibbles
};
struct BlockQ5_K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[12];
    uint8_t qh[kQKK / 8];  // bit s of qh[l] = fifth bit of element 32*s + l
    uint8_t qs[kQKK / 2];
};
struct BlockQ6_K {
    uint8_t ql[kQKK / 2];   // low 4 bits
    uint8_t qh[kQKK / 4];   // high 2 bits
    int8_t scales[kQKK / 16];
    uint16_t d;
};
// Codebook formats: 4-bit indices into a fixed table of int8 values
// (kIq4Values, kMxfp4Values), element j in the low nibble of qs[j] and j+16 in
// the high one, per 32 elements.
struct BlockIQ4_NL {
    uint16_t d;  // fp16 scale
    uint8_t qs[kQK / 2];
};
struct BlockIQ4_XS {
    uint16_t d;                // fp16 super-block scale
    uint16_t scales_h;         // high 2 bits of the 8 sub-block scales, 2 bits each
    uint8_t scales_l[kQKK / 64];  // low 4 bits of the sub-block scales, two a byte
    uint8_t qs[kQKK / 2];     // 8 sub-blocks of 32, each laid out as IQ4_NL's
};
struct BlockMXFP4 {
    uint8_t e;  // E8M0 shared exponent (scale 2^(e - 128) for the doubled values)
    uint8_t qs[kQK / 2];
};
struct BlockQ8_K {
    float d;
    int8_t qs[kQKK];
    int16_t bsums[kQKK / 16];  // sum of each group of 16 qs
};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockIQ4_NL) == 18);
static_assert(sizeof(BlockIQ4_XS) == 136);
static_assert(sizeof(BlockMXFP4) == 17);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);

// Unpacks the 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K block.
inline void kquant_scale_min(const uint8_t* s, int j, uint8_t* sc, uint8_t* m) {
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = static_cast<uint8_t>((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
        *m = static_cast<uint8_t>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
    }
}

// The non-linear 4-bit grid of IQ4_NL and IQ4_XS (llama.cpp's kvalues_iq4nl).
inline constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
// MXFP4's E2M1 values, doubled so they are integers (the scale halves them back).
inline constexpr int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// Half of MXFP4's E8M0 scale 2^(e - 127), exactly (subnormal for e < 2).
inline float e8m0_half(uint8_t e) {
    const uint32_t bits = e < 2 ? (uint32_t{0x00200000} << e) : (uint32_t{e} - 1) << 23;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// Sub-block scale j (0..15) of a Q3_K block, without its +32 offset removed:
// low 4 bits in the nibbles of scales[0..7], high 2 bits in scales[8..11].
inline int q3k_scale(const uint8_t* s, int j) {
    const int lo = (j < 8 ? s[j] : s[j - 8] >> 4) & 0xF;
    const int hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
    return lo | (hi << 4);
}

// Sub-block scale j (0..7) of an IQ4_XS block, stored + 32.
inline int iq4xs_scale(const BlockIQ4_XS& b, int j) {
    const int lo = (b.scales_l[j / 2] >> (4 * (j % 2))) & 0xF;
    const int hi = (b.scales_h >> (2 * j)) & 3;
    return lo | (hi << 4);
}

}  // namespace tessera
