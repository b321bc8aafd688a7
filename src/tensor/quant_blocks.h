// The exact on-disk block layouts of GGUF's quantized types (what ggml calls
// block_q4_0 and friends). Shared by the scalar reference code in tensor/ and
// the SIMD kernels in kernels/, which read the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>

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

}  // namespace tessera
