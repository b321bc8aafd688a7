// AMX-INT8 prompt tiles (kernels/amx_tiles.h): tile multiplies of one half
// block of 16 tokens by one of 16 weight rows, the float side on AVX-512 in
// the VNNI kernels' sum order (dot_quads_x86_body.h), lane by lane.
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

// Tile registers: C in 0 and 1 (16 tokens x 16 rows of int32), A in 2 and 3
// (16 tokens x K bytes: a half block, or a Q4_K sub-block), B in 4 and 5
// (K / 4 rows of 16 weight rows x 4 bytes: the same elements).
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
    for (int t = 0; t < 2; ++t) cfg.rows[t] = 16, cfg.colsb[t] = 64;
    for (int t = 2; t < 4; ++t) cfg.rows[t] = 16, cfg.colsb[t] = static_cast<uint16_t>(k);
    for (int t = 4; t < 6; ++t) cfg.rows[t] = static_cast<uint8_t>(k / 4), cfg.colsb[t] = 64;
    _tile_loadconfig(&cfg);
}

// The lane of block b's half h in the VNNI kernels' sum order: steps of four
// blocks a, b, c, d in lanes (a a c c b b d d).
constexpr int kLaneOfBlock[4] = {0, 4, 2, 6};

// The first n_rows of a tile's 16.
__mmask16 row_mask(int n_rows) {
    return n_rows >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << n_rows) - 1);
}

// Block b of rows [0, n_rows) into the scratch layout (amx_x86.h): tile row
// j of half h holds unit 2j + h (elements 4u .. 4u + 3) of each row, the
// weights as int8 (Q4_0's nibbles minus 8; Q4_1's as they are, unsigned).
// Missing rows read as zeros.
template <class Block>
void unpack_block(const uint8_t* w, size_t w_stride, int n_rows, int64_t b, uint8_t* out) {
    const __mmask16 rows = row_mask(n_rows);
    const __m512i offsets = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                               _mm512_set1_epi32(static_cast<int>(w_stride)));
    const uint8_t* base = w + static_cast<size_t>(b) * sizeof(Block);
    const __m512i zero = _mm512_setzero_si512();
    auto gather = [&](size_t at) { return _mm512_mask_i32gather_epi32(zero, rows, offsets, base + at, 1); };
    auto put_unit = [&](int u, __m512i v) {
        _mm512_store_si512(out + (u % 2) * kAmxHalfBytes + (u / 2) * 64, v);
    };
    const __m512i head = gather(0);  // d, then Q4_1's m (or the first quant bytes)
    _mm512_store_ps(out + 2 * kAmxHalfBytes, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(head)));
    if constexpr (std::is_same_v<Block, BlockQ4_1>) {
        _mm512_store_ps(out + 2 * kAmxHalfBytes + 64, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(head, 16))));
    }
    const size_t qs = offsetof(Block, qs);
    if constexpr (std::is_same_v<Block, BlockQ8_0>) {
        for (int u = 0; u < 8; ++u) put_unit(u, gather(qs + 4 * u));
    } else {
        const __m512i nibble = _mm512_set1_epi8(0x0F);
        const __m512i offset = _mm512_set1_epi8(std::is_same_v<Block, BlockQ4_0> ? 8 : 0);
        for (int p = 0; p < 4; ++p) {  // bytes 4p .. 4p + 3: elements 4p.. (low) and 16 + 4p.. (high)
            const __m512i g = gather(qs + 4 * p);
            put_unit(p, _mm512_sub_epi8(_mm512_and_si512(g, nibble), offset));
            put_unit(p + 4, _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(g, 4), nibble), offset));
        }
    }
}

// The lane sums of a 16-token x 16-row tile, lane by lane (see amx_tiles.h).
// Q4_1's lanes of half 0 first add m_w * s_y, as the VNNI kernels do (their
// half-1 lanes add m_w * 0, which leaves a sum that is never -0 unchanged).
template <class Block>
void tile_lanes(int64_t nb, const uint8_t* act, size_t act_stride, const float* scales, const uint8_t* wsc,
                float* lanes) {
    constexpr bool kMin = std::is_same_v<Block, BlockQ4_1>;
    constexpr int kFloats = kMin ? 2 : 1;  // per block and token: d (and Q8_1's d * sum)
    alignas(64) int32_t sums[16 * 16];
    for (int c = 0; c < 4; ++c) {
        for (int h = 0; h < 2; ++h) {
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
            float* lane = lanes + (kLaneOfBlock[c] + h) * 256;
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

template <class Block>
void tiles(int64_t n, const uint8_t* w, size_t w_stride, int n_rows, const uint8_t* act, size_t act_stride,
           const float* scales, int64_t n_tok, float* out, size_t out_stride, uint8_t* scratch) {
    constexpr int kFloats = std::is_same_v<Block, BlockQ4_1> ? 2 : 1;
    const int64_t nb = n / kQK;
    for (int64_t b = 0; b < nb; ++b) unpack_block<Block>(w, w_stride, n_rows, b, scratch + b * kAmxBlockBytes);
    alignas(64) float lanes[8 * 256];
    load_tile_config(16);
    for (int64_t t = 0; t < n_tok; t += kAmxTileTokens) {
        tile_lanes<Block>(nb, act + t * act_stride, act_stride, scales + t * nb * kFloats, scratch, lanes);
        store_lane_sums(lanes, row_mask(n_rows), out + t * out_stride, out_stride);
    }
    _tile_release();  // the next context switch saves no tile data
}

// ---- Q4_K: lane L is sub-block L (dot_supers_x86_body.h) ----

// Super-block ib of rows [0, n_rows) into the scratch layout (amx_x86.h):
// sub-block L = 2c + o is chunk c's low (o = 0) or high nibbles, the high
// ones kept in place (byte & 0xF0: 16 times the nibble, as the VNNI tiles
// keep them, with 1/16 in the lane's scale), so the integer dots are the
// VNNI tiles' own. Missing rows read as zeros.
void unpack_q4_k(const uint8_t* w, size_t w_stride, int n_rows, int64_t ib, uint8_t* out) {
    const __mmask16 rows = row_mask(n_rows);
    const __m512i offsets = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                               _mm512_set1_epi32(static_cast<int>(w_stride)));
    const uint8_t* base = w + static_cast<size_t>(ib) * sizeof(BlockQ4_K) + offsetof(BlockQ4_K, qs);
    const __m512i zero = _mm512_setzero_si512(), lo = _mm512_set1_epi8(0x0F), hi = _mm512_set1_epi8(static_cast<char>(0xF0));
    for (int c = 0; c < 4; ++c) {
        for (int p = 0; p < 8; ++p) {
            const __m512i g = _mm512_mask_i32gather_epi32(zero, rows, offsets, base + 32 * c + 4 * p, 1);
            _mm512_store_si512(out + (2 * c) * kAmxSubBlockBytes + p * 64, _mm512_and_si512(g, lo));
            _mm512_store_si512(out + (2 * c + 1) * kAmxSubBlockBytes + p * 64, _mm512_and_si512(g, hi));
        }
    }
    // Lane L's float factors of each row, as AffineKSuper::scales computes them.
    alignas(64) float a[8][16] = {}, b[8][16] = {};
    for (int r = 0; r < n_rows; ++r) {
        const auto& x = *reinterpret_cast<const BlockQ4_K*>(w + r * w_stride + ib * sizeof(BlockQ4_K));
        uint32_t u[3];
        std::memcpy(u, x.scales, sizeof u);
        const uint32_t sc_hi = (u[2] & 0x0F0F0F0F) | (((u[0] >> 6) & 0x03030303) << 4);
        const uint32_t mn_hi = ((u[2] >> 4) & 0x0F0F0F0F) | (((u[1] >> 6) & 0x03030303) << 4);
        const uint64_t sc = (u[0] & 0x3F3F3F3F) | (uint64_t{sc_hi} << 32);
        const uint64_t mn = (u[1] & 0x3F3F3F3F) | (uint64_t{mn_hi} << 32);
        const float d = _cvtsh_ss(x.d), dmin = _cvtsh_ss(x.dmin);
        for (int l = 0; l < 8; ++l) {
            const float dk = d * (l % 2 == 0 ? 1.0f : 0.0625f);
            a[l][r] = static_cast<float>((sc >> (8 * l)) & 0xFF) * dk;
            b[l][r] = static_cast<float>((mn >> (8 * l)) & 0xFF) * dmin;
        }
    }
    std::memcpy(out + kAmxSuperScalesAt, a, sizeof a);
    std::memcpy(out + kAmxSuperScalesAt + sizeof a, b, sizeof b);
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
                                               _mm512_set1_ps(scales[ib * 9 * 16 + m]));
                acc[m] = _mm512_fmadd_ps(a, t, acc[m]);
                acc[m] = _mm512_fnmadd_ps(b, _mm512_set1_ps(scales[(ib * 9 + 1 + l) * 16 + m]), acc[m]);
            }
        }
        for (int m = 0; m < 16; ++m) _mm512_store_ps(lanes + l * 256 + 16 * m, acc[m]);
    }
}

void q4_k_tiles(int64_t n, const uint8_t* w, size_t w_stride, int n_rows, const uint8_t* act, size_t act_stride,
                const float* scales, int64_t n_tok, float* out, size_t out_stride, uint8_t* scratch) {
    const int64_t nb = n / kQKK;
    for (int64_t ib = 0; ib < nb; ++ib) unpack_q4_k(w, w_stride, n_rows, ib, scratch + ib * kAmxSuperBytes);
    alignas(64) float lanes[8 * 256];
    load_tile_config(32);
    for (int64_t t = 0; t < n_tok; t += kAmxTileTokens) {
        q4_k_lanes(nb, act + t * act_stride, act_stride, scales + t * nb * 9, scratch, lanes);
        store_lane_sums(lanes, row_mask(n_rows), out + t * out_stride, out_stride);
    }
    _tile_release();
}

}  // namespace

AmxTilesFn amx_tiles(GgmlType weight) {
    switch (weight) {
        case GgmlType::Q4_0: return tiles<BlockQ4_0>;
        case GgmlType::Q4_1: return tiles<BlockQ4_1>;
        case GgmlType::Q8_0: return tiles<BlockQ8_0>;
        case GgmlType::Q4_K: return q4_k_tiles;
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
