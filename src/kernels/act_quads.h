// Q8_0 / Q8_1 / Q8_K activation rows re-laid out for the tiled Q4_0, Q5_0,
// Q8_0, Q4_1, Q5_1, Q4_K, Q5_K and Q6_K kernels, once per matmul: everything those
// kernels would otherwise recompute per weight row (byte shuffles, offset
// sums, scales) is done here, once per token.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gguf/ggml_type.h"
#include "kernels/dot_kernels.h"

namespace tessera {

inline constexpr int kQuadBlocks = 4;

// Four Q8_0 blocks a, b, c, d (missing ones at the end of a row are zero).
// qs[j] holds elements 8j..8j+7 of the blocks in the order a, c, b, d, so an
// int32 lane of byte dots over qs[0..3] sums 16 elements of one block, two
// lanes per block in the order (a a c c b b d d).
struct ActQuad {
    int8_t qs[4][32];
    int32_t neg8[8];    // per lane: -8 * the sum of the 16 elements it covers (Q5_0 doubles it)
    int32_t neg128[8];  // the same times 128 (unsigned-offset Q8_0 weights)
    float d[8];         // block scales in the order (a a c c b b d d)
};
static_assert(sizeof(ActQuad) == 224);

// Four Q8_1 blocks for Q4_1 and Q5_1 weights (unsigned, so no offset sums);
// s holds each block's d * sum(qs) in its first lane of (a a c c b b d d), 0
// in the second, for the min term m_x * s_y.
struct ActQuadQ8_1 {
    int8_t qs[4][32];
    float d[8];
    float s[8];
};
static_assert(sizeof(ActQuadQ8_1) == 192);

// A row whose block count leaves two blocks (a, b) for its last, partial
// quad has that quad a second time after it, in two fields instead of four:
// tail2[u][4l + e] holds element 16 * (l / 2) + 8u + 4 * (l % 2) + e of
// block a for lanes l = 0..3 and of block b for lanes 4..7, so two byte
// dots leave in lanes l and l + 2 the two halves of the sum lane l of
// (a a c c b b d d) holds in the quad. The AVX-512 pair tiles read it (two
// byte dots where the quad costs four, on 576-wide rows 5 of 20); the quad's
// neg8 / neg128, d and s fields serve both.
inline constexpr size_t kTail2Bytes = 2 * 32;

// One Q8_K super-block for Q4_K, Q5_K and Q6_K weights: int32 lane L of every qs
// field holds four elements of sub-block L (32 elements), so chained byte
// dots leave each sub-block's dot (fields 0-3 and 4-7: each half's) in its
// own lane, where its scales apply. msum is Q4_K's and Q5_K's min term, d times the
// sub-block's sum; neg32 Q6_K's offset, -32 times each half's sum.
struct ActSuperQ8_K {
    int8_t qs[8][32];      // qs[j][4L + e] = element 32L + 4j + e
    float d[8];            // the block scale in every lane
    float msum[8];
    int32_t neg32[2][8];   // neg32[h][L]: elements 32L + 16h .. + 15
};
static_assert(sizeof(ActSuperQ8_K) == 384);

// Prepared rows come in token pairs: in the row of tokens 2i and 2i+1 each
// 32-byte field of a quad of token 2i is followed by the same field of token
// 2i+1, so one 512-bit load fetches a field for both tokens (the matmul
// starts the pair rows on a cache line, so such a load never straddles two).
inline constexpr size_t kQuadField = 32;
static_assert(sizeof(ActQuad) % kQuadField == 0 && sizeof(ActQuadQ8_1) % kQuadField == 0 &&
              sizeof(ActSuperQ8_K) % kQuadField == 0);

// Bytes of one prepared pair row for rows of n elements (a multiple of the
// block size) quantized to `act` (Q8_0 -> ActQuad, Q8_1 -> ActQuadQ8_1,
// Q8_K -> ActSuperQ8_K).
size_t act_quad_pairs_bytes(GgmlType act, int64_t n);

// Writes token `half` (0 or 1) of the pair row `out` from q_row, its n
// elements as `act` blocks; the same bytes at every level (the VNNI and AVX2
// levels have SIMD builds, AVX2's for Q8_0 / Q8_1 rows only; the scalar
// level the plain one).
void prepare_act_quads(GgmlType act, int64_t n, const uint8_t* q_row, int half, uint8_t* out, SimdLevel level);

}  // namespace tessera
