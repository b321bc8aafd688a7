// AMX-INT8 prompt tiles (kernels/amx_tiles.h): tile multiplies of one half
// block (Q4_K: one sub-block) of 16 tokens by the same elements of 16 weight
// rows, the float side on AVX-512 in the VNNI kernels' sum order
// (dot_legacy_x86_body.h, dot_kquants_x86_body.h), lane by lane.
#include "kernels/cpu/amx_x86.h"
#include "kernels/cpu/dot_x86.h"

#if defined(__x86_64__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tensor/quant_blocks.h"

namespace tessera::x86 {

bool amx_int8_usable() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
    const bool tile = (d >> 24) & 1, int8 = (d >> 25) & 1;
    if (!tile || !int8) return false;
    // XCR0 bits 17 and 18: the OS saves the tile configuration and data
    // (xgetbv exists: the caller has seen AVX-512 usable).
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if (((lo >> 17) & 3) != 3) return false;
    // Linux hands out the tile data's state only on request (per process).
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

}  // namespace tessera::x86

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni,amx-tile,amx-int8")

namespace tessera::x86 {
namespace {

// Tile registers: C in 0 (16 tokens x 16 rows of int32), A in 2 (16 tokens
// x K bytes: a half block, or a Q4_K sub-block), B in 4 (K / 4 rows of 16
// weight rows x 4 bytes: the same elements). Two sets taking turns, the next
// multiply issued before this one's sums are stored, measured no faster:
// the tile loads and stores, not the multiply's latency, share the core's
// load and store ports with the float side.
struct alignas(64) TileConfig {
    uint8_t palette = 1;
    uint8_t start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t colsb[16] = {};
    uint8_t rows[16] = {};
};

// k: the bytes of a multiply's K (16: a half block; 32: a Q4_K sub-block).
void load_tile_config(int k) {
    TileConfig cfg;
    cfg.rows[0] = 16, cfg.colsb[0] = 64;
    cfg.rows[2] = 16, cfg.colsb[2] = static_cast<uint16_t>(k);
    cfg.rows[4] = static_cast<uint8_t>(k / 4), cfg.colsb[4] = 64;
    _tile_loadconfig(&cfg);
}

// The lane of block b's half h in the VNNI kernels' sum order: steps of four
// blocks a, b, c, d in lanes (a a c c b b d d).
constexpr int kLaneOfBlock[4] = {0, 4, 2, 6};

// The first n_rows of a tile's 16.
__mmask16 row_mask(int n_rows) { return n_rows >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << n_rows) - 1); }

// Pointers to block b of each of a tile's 16 rows: rows past n_rows point at
// `zeros` (at least one block long), so they read as zero weights.
template <class Block>
void block_pointers(const uint8_t* w, size_t w_stride, int n_rows, int64_t b, const uint8_t* zeros,
                    const uint8_t* (&p)[16]) {
    for (int r = 0; r < 16; ++r) p[r] = r < n_rows ? w + r * w_stride + static_cast<size_t>(b) * sizeof(Block) : zeros;
}

// out[q] dword r = dword q of the 16 bytes at p[r] + off: four rows per
// vector (r, r + 4, r + 8, r + 12 in its 128-bit lanes), then a 4 x 4
// dword transpose within the lanes. Plain loads: gathers fetched every dword
// on its own (four times the loads).
inline void transpose_rows16(const uint8_t* const (&p)[16], size_t off, __m512i (&out)[4]) {
    __m512i z[4];
    for (int k = 0; k < 4; ++k) {
        auto row = [&](int r) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p[r] + off)); };
        z[k] = _mm512_inserti32x4(
            _mm512_inserti32x4(_mm512_inserti32x4(_mm512_castsi128_si512(row(k)), row(k + 4), 1), row(k + 8), 2),
            row(k + 12), 3);
    }
    const __m512i t0 = _mm512_unpacklo_epi32(z[0], z[1]), t1 = _mm512_unpackhi_epi32(z[0], z[1]);
    const __m512i t2 = _mm512_unpacklo_epi32(z[2], z[3]), t3 = _mm512_unpackhi_epi32(z[2], z[3]);
    out[0] = _mm512_unpacklo_epi64(t0, t2);
    out[1] = _mm512_unpackhi_epi64(t0, t2);
    out[2] = _mm512_unpacklo_epi64(t1, t3);
    out[3] = _mm512_unpackhi_epi64(t1, t3);
}

// The 16 rows' dword at p[r] + off.
inline __m512i load_row_dwords(const uint8_t* const (&p)[16], size_t off) {
    alignas(64) uint32_t v[16];
    for (int r = 0; r < 16; ++r) std::memcpy(&v[r], p[r] + off, sizeof v[r]);
    return _mm512_load_si512(v);
}

// Formats whose weights go in unsigned against Q8_1 activations, with a
// min term (the rest are signed, Q4_0's and Q5_0's offsets taken off).
template <class Block>
inline constexpr bool kHasMin = std::is_same_v<Block, BlockQ4_1> || std::is_same_v<Block, BlockQ5_1>;
template <class Block>
inline constexpr bool kFiveBits = std::is_same_v<Block, BlockQ5_0> || std::is_same_v<Block, BlockQ5_1>;

// The 16 rows' fp16 pair at p[r] + off (a block's d, or d and the min m), as
// two float vectors (low and high halves).
inline void load_scale_pairs(const uint8_t* const (&p)[16], size_t off, __m512& lo, __m512& hi) {
    const __m512i v = load_row_dwords(p, off);
    lo = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(v));
    hi = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(v, 16)));
}

// Block b of rows [0, n_rows) into the scratch layout (amx_x86.h): tile row
// j of half h holds unit 2j + h (elements 4u .. 4u + 3) of each row, the
// weights as int8 (Q4_0's nibbles minus 8, Q5_0's five bits minus 16; Q4_1's
// and Q5_1's as they are, unsigned). Missing rows read as zeros.
template <class Block>
void unpack_block(const uint8_t* w, size_t w_stride, int n_rows, int64_t b, const uint8_t* zeros, uint8_t* out) {
    const uint8_t* p[16];
    block_pointers<Block>(w, w_stride, n_rows, b, zeros, p);
    auto put_unit = [&](int u, __m512i v) { _mm512_store_si512(out + (u % 2) * kAmxHalfBytes + (u / 2) * 64, v); };
    __m512 d, m;
    load_scale_pairs(p, 0, d, m);  // d, then Q4_1's / Q5_1's m (or the next two bytes)
    _mm512_store_ps(out + 2 * kAmxHalfBytes, d);
    if constexpr (kHasMin<Block>) _mm512_store_ps(out + 2 * kAmxHalfBytes + 64, m);
    const size_t qs = offsetof(Block, qs);
    __m512i q[4];
    if constexpr (std::is_same_v<Block, BlockQ8_0>) {
        for (int half = 0; half < 2; ++half) {  // units 4 half .. 4 half + 3
            transpose_rows16(p, qs + 16 * half, q);
            for (int u = 0; u < 4; ++u) put_unit(4 * half + u, q[u]);
        }
    } else {
        const __m512i nibble = _mm512_set1_epi8(0x0F);
        constexpr char kOffset = std::is_same_v<Block, BlockQ4_0> ? 8 : std::is_same_v<Block, BlockQ5_0> ? 16 : 0;
        const __m512i offset = _mm512_set1_epi8(kOffset);
        // Unit u's fifth bits: bit 4u + e of qh to bit 4 of byte e.
        auto fifth_bits = [&](int u) {
            if constexpr (kFiveBits<Block>) {
                const __m512i v = _mm512_srli_epi32(load_row_dwords(p, offsetof(Block, qh)), 4 * u);
                auto bit = [&](int e) {
                    return _mm512_slli_epi32(_mm512_and_si512(v, _mm512_set1_epi32(1 << e)), 7 * e + 4);
                };
                return _mm512_or_si512(_mm512_or_si512(bit(0), bit(1)), _mm512_or_si512(bit(2), bit(3)));
            } else {
                (void)u;
                return _mm512_setzero_si512();
            }
        };
        transpose_rows16(p, qs, q);
        for (int u = 0; u < 4; ++u) {  // bytes 4u .. 4u + 3: elements 4u.. (low) and 16 + 4u.. (high)
            const __m512i lo = _mm512_or_si512(_mm512_and_si512(q[u], nibble), fifth_bits(u));
            const __m512i hi =
                _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(q[u], 4), nibble), fifth_bits(u + 4));
            put_unit(u, _mm512_sub_epi8(lo, offset));
            put_unit(u + 4, _mm512_sub_epi8(hi, offset));
        }
    }
}

// The lane sums of a 16-token x 16-row tile, lane by lane (see amx_tiles.h).
// Q4_1's and Q5_1's lanes of half 0 first add m_w * s_y, as the VNNI kernels do (their
// half-1 lanes add m_w * 0, which leaves a sum that is never -0 unchanged).
// (Chunks of 32 blocks through all eight lanes, to keep a 2048-wide row
// tile's 72 KB in L1, measured no faster.)
template <class Block>
void tile_lanes(int64_t nb, const uint8_t* act, size_t act_stride, const float* scales, const uint8_t* wsc,
                float* lanes) {
    constexpr bool kMin = kHasMin<Block>;
    constexpr int kFloats = kMin ? kAmxQ8_1Floats : kAmxQ8_0Floats;  // d (and Q8_1's d * sum)
    alignas(64) int32_t sums[16 * 16];
    for (int c = 0; c < 4; ++c) {
        for (int h = 0; h < 2; ++h) {
            float* lane = lanes + (kLaneOfBlock[c] + h) * 256;
            __m512 acc[16];
            for (auto& a : acc) a = _mm512_setzero_ps();
            for (int64_t b = c; b < nb; b += 4) {
                _tile_zero(0);
                _tile_loadd(2, act + b * kQK + h * 16, act_stride);
                _tile_loadd(4, wsc + b * kAmxBlockBytes + h * kAmxHalfBytes, 64);
                if constexpr (kMin) {
                    _tile_dpbsud(0, 2, 4);  // signed activations, unsigned nibbles
                } else {
                    _tile_dpbssd(0, 2, 4);
                }
                _tile_stored(0, sums, 64);
                const uint8_t* wb = wsc + b * kAmxBlockBytes + 2 * kAmxHalfBytes;
                const __m512 wd = _mm512_load_ps(wb);
                if (kMin && h == 0) {
                    const __m512 wm = _mm512_load_ps(wb + 64);
#pragma GCC unroll 16
                    for (int m = 0; m < 16; ++m) {
                        acc[m] = _mm512_fmadd_ps(wm, _mm512_set1_ps(scales[(b * kFloats + 1) * 16 + m]), acc[m]);
                    }
                }
#pragma GCC unroll 16
                for (int m = 0; m < 16; ++m) {
                    const __m512 scale = _mm512_mul_ps(wd, _mm512_set1_ps(scales[b * kFloats * 16 + m]));
                    acc[m] = _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(_mm512_load_si512(sums + 16 * m)), acc[m]);
                }
            }
            for (int m = 0; m < 16; ++m) _mm512_store_ps(lane + 16 * m, acc[m]);
        }
    }
}

// out rows [t0, t0 + 16) from the eight lanes: hsum_ps's order,
// ((0 + 4) + (2 + 6)) + ((1 + 5) + (3 + 7)).
void store_lane_sums(const float* lanes, __mmask16 rows, float* out, size_t out_stride) {
    for (int m = 0; m < 16; ++m) {
        auto l = [&](int i) { return _mm512_load_ps(lanes + i * 256 + 16 * m); };
        const __m512 v = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(l(0), l(4)), _mm512_add_ps(l(2), l(6))),
                                       _mm512_add_ps(_mm512_add_ps(l(1), l(5)), _mm512_add_ps(l(3), l(7))));
        _mm512_mask_storeu_ps(out + m * out_stride, rows, v);
    }
}

// ---- Q4_K: lane L is sub-block L (dot_kquants_x86_body.h) ----

// Super-block ib of rows [0, n_rows) into the scratch layout (amx_x86.h):
// sub-block L = 2c + o is chunk c's low (o = 0) or high nibbles, the high
// ones kept in place (byte & 0xF0: 16 times the nibble, as the VNNI tiles
// keep them, with 1/16 in the lane's scale), so the integer dots are the
// VNNI tiles' own. Missing rows read as zeros.
void unpack_q4_k(const uint8_t* w, size_t w_stride, int n_rows, int64_t ib, const uint8_t* zeros, uint8_t* out) {
    const uint8_t* p[16];
    block_pointers<BlockQ4_K>(w, w_stride, n_rows, ib, zeros, p);
    const __m512i lo = _mm512_set1_epi8(0x0F), hi = _mm512_set1_epi8(static_cast<char>(0xF0));
    __m512i q[4];
    for (int c = 0; c < 4; ++c) {
        for (int half = 0; half < 2; ++half) {  // units 4 half .. 4 half + 3 of chunk c
            transpose_rows16(p, offsetof(BlockQ4_K, qs) + 32 * c + 16 * half, q);
            for (int u = 0; u < 4; ++u) {
                const size_t at = (4 * half + u) * 64;
                _mm512_store_si512(out + (2 * c) * kAmxSubBlockBytes + at, _mm512_and_si512(q[u], lo));
                _mm512_store_si512(out + (2 * c + 1) * kAmxSubBlockBytes + at, _mm512_and_si512(q[u], hi));
            }
        }
    }
    // Lane L's float factors of the 16 rows, as AffineKSuper::scales
    // computes them, from the scales' dwords a, b, c (k_scales_mins): for
    // L < 4 sc = byte L of a & 63, mn = byte L of b & 63; else sc = (byte
    // L - 4 of c & 15) | (byte L - 4 of a >> 6) << 4, mn likewise with c's
    // high nibble and b.
    __m512 d, dmin;
    load_scale_pairs(p, 0, d, dmin);
    __m512i abc[4];
    transpose_rows16(p, offsetof(BlockQ4_K, scales), abc);
    const __m512i m6 = _mm512_set1_epi32(63), m4 = _mm512_set1_epi32(15), m2 = _mm512_set1_epi32(3);
    for (int l = 0; l < 8; ++l) {
        auto byte_of = [&](__m512i v, int k) {
            return _mm512_and_si512(_mm512_srli_epi32(v, 8 * k), _mm512_set1_epi32(255));
        };
        __m512i sc, mn;
        if (l < 4) {
            sc = _mm512_and_si512(byte_of(abc[0], l), m6);
            mn = _mm512_and_si512(byte_of(abc[1], l), m6);
        } else {
            const __m512i c = byte_of(abc[2], l - 4);
            sc = _mm512_or_si512(
                _mm512_and_si512(c, m4),
                _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(byte_of(abc[0], l - 4), 6), m2), 4));
            mn = _mm512_or_si512(
                _mm512_srli_epi32(c, 4),
                _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(byte_of(abc[1], l - 4), 6), m2), 4));
        }
        const __m512 dk = _mm512_mul_ps(d, _mm512_set1_ps(l % 2 == 0 ? 1.0f : 0.0625f));
        _mm512_store_ps(out + kAmxSuperScalesAt + l * 64, _mm512_mul_ps(_mm512_cvtepi32_ps(sc), dk));
        _mm512_store_ps(out + kAmxSuperScalesAt + 8 * 64 + l * 64, _mm512_mul_ps(_mm512_cvtepi32_ps(mn), dmin));
    }
}

// The eight lanes of a 16-token x 16-row Q4_K tile, lane by lane: per
// super-block acc += a_L (dot_L d_y), then acc -= b_L msum_L.
void q4_k_lanes(int64_t nb, const uint8_t* act, size_t act_stride, const float* scales, const uint8_t* wsc,
                float* lanes) {
    alignas(64) int32_t sums[16 * 16];
    for (int l = 0; l < 8; ++l) {
        __m512 acc[16];
        for (auto& v : acc) v = _mm512_setzero_ps();
        for (int64_t ib = 0; ib < nb; ++ib) {
            const uint8_t* blk = wsc + ib * kAmxSuperBytes;
            _tile_zero(0);
            _tile_loadd(2, act + ib * kQKK + 32 * l, act_stride);
            _tile_loadd(4, blk + l * kAmxSubBlockBytes, 64);
            _tile_dpbsud(0, 2, 4);  // signed activations, unsigned nibbles
            _tile_stored(0, sums, 64);
            const __m512 a = _mm512_load_ps(blk + kAmxSuperScalesAt + l * 64);
            const __m512 b = _mm512_load_ps(blk + kAmxSuperScalesAt + 8 * 64 + l * 64);
#pragma GCC unroll 16
            for (int m = 0; m < 16; ++m) {
                const __m512 t = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_load_si512(sums + 16 * m)),
                                               _mm512_set1_ps(scales[ib * kAmxQ8_KFloats * 16 + m]));
                acc[m] = _mm512_fmadd_ps(a, t, acc[m]);
                acc[m] = _mm512_fnmadd_ps(b, _mm512_set1_ps(scales[(ib * kAmxQ8_KFloats + 1 + l) * 16 + m]), acc[m]);
            }
        }
        for (int m = 0; m < 16; ++m) _mm512_store_ps(lanes + l * 256 + 16 * m, acc[m]);
    }
}

// ---- The tiles of a format ----

// A format's pieces: its weight block and the scratch bytes of one, the K of
// its multiplies, its block floats a token, and its unpack and lane loop.
template <class B>
struct LegacyTiles {
    using Block = B;
    static constexpr int64_t kElems = kQK;
    static constexpr size_t kScratchBytes = kAmxBlockBytes;
    static constexpr int kK = 16;
    static constexpr int kFloats = kHasMin<B> ? kAmxQ8_1Floats : kAmxQ8_0Floats;
    static constexpr auto unpack = unpack_block<B>;
    static constexpr auto lanes = tile_lanes<B>;
};
struct Q4_KTiles {
    using Block = BlockQ4_K;
    static constexpr int64_t kElems = kQKK;
    static constexpr size_t kScratchBytes = kAmxSuperBytes;
    static constexpr int kK = 32;
    static constexpr int kFloats = kAmxQ8_KFloats;
    static constexpr auto unpack = unpack_q4_k;
    static constexpr auto lanes = q4_k_lanes;
};

// The AmxTilesFn of format F: its 16 rows unpacked once, then 16 tokens at a
// time through its lanes and the final sums.
template <class F>
void tiles(int64_t n, const uint8_t* w, size_t w_stride, int n_rows, const uint8_t* act, size_t act_stride,
           const float* scales, int64_t n_tok, float* out, size_t out_stride, uint8_t* scratch) {
    const int64_t nb = n / F::kElems;
    alignas(64) const uint8_t zeros[sizeof(typename F::Block)] = {};
    for (int64_t b = 0; b < nb; ++b) F::unpack(w, w_stride, n_rows, b, zeros, scratch + b * F::kScratchBytes);
    alignas(64) float lanes[8 * 256];
    load_tile_config(F::kK);
    for (int64_t t = 0; t < n_tok; t += kAmxTileTokens) {
        F::lanes(nb, act + t * act_stride, act_stride, scales + t * nb * F::kFloats, scratch, lanes);
        store_lane_sums(lanes, row_mask(n_rows), out + t * out_stride, out_stride);
    }
    _tile_release();  // the next context switch saves no tile data
}

}  // namespace

AmxTilesFn amx_tiles(GgmlType weight) {
    switch (weight) {
        case GgmlType::Q4_0: return tiles<LegacyTiles<BlockQ4_0>>;
        case GgmlType::Q4_1: return tiles<LegacyTiles<BlockQ4_1>>;
        case GgmlType::Q5_0: return tiles<LegacyTiles<BlockQ5_0>>;
        case GgmlType::Q5_1: return tiles<LegacyTiles<BlockQ5_1>>;
        case GgmlType::Q8_0: return tiles<LegacyTiles<BlockQ8_0>>;
        case GgmlType::Q4_K: return tiles<Q4_KTiles>;
        default: return nullptr;
    }
}

}  // namespace tessera::x86
#pragma GCC pop_options
#pragma GCC diagnostic pop
#else
namespace tessera::x86 {
bool amx_int8_usable() { return false; }
AmxTilesFn amx_tiles(GgmlType) { return nullptr; }
}  // namespace tessera::x86
#endif
