// Builds the ActQuad / ActQuadQ8_1 / ActSuperQ8_K pair rows from Q8_0 / Q8_1 /
// Q8_K blocks: plain C++ (it runs once per token and matmul, not per weight
// row), the whole quads of Q8_0 / Q8_1 rows and Q8_K rows by AVX-512 at
// the VNNI level (kernels/cpu/act_quads_avx512.cpp), those of Q8_0 / Q8_1
// rows by AVX2 at the AVX2 level (kernels/cpu/act_quads_avx2.cpp); the
// same bytes at every level.
#include "kernels/act_quads.h"

#include <cstring>

#include "core/check.h"
#include "kernels/cpu/act_quads_x86.h"
#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"

namespace tessera {
namespace {

// First lane of block k of a quad in the lane order (a a c c b b d d).
constexpr int kLaneOfBlock[kQuadBlocks] = {0, 4, 2, 6};

// Block k's elements 8j..8j+7 into qs[j], at its lane pair's bytes.
void put_bytes(const int8_t* qs, int k, int8_t (&out)[4][32]) {
    for (int j = 0; j < 4; ++j) std::memcpy(out[j] + 4 * kLaneOfBlock[k], qs + 8 * j, 8);
}

void put_q8_0(const BlockQ8_0& b, int k, ActQuad& a) {
    put_bytes(b.qs, k, a.qs);
    for (int half = 0; half < 2; ++half) {  // lane 2s covers elements 8j+0..3, lane 2s+1 8j+4..7
        int32_t sum = 0;
        for (int j = 0; j < 4; ++j) {
            for (int e = 0; e < 4; ++e) sum += b.qs[8 * j + 4 * half + e];
        }
        a.neg8[kLaneOfBlock[k] + half] = -8 * sum;
        a.neg128[kLaneOfBlock[k] + half] = -128 * sum;
    }
    const float d = fp16_to_fp32(b.d);
    a.d[kLaneOfBlock[k]] = d;
    a.d[kLaneOfBlock[k] + 1] = d;
}

void put_q8_1(const BlockQ8_1& b, int k, ActQuadQ8_1& a) {
    put_bytes(b.qs, k, a.qs);
    const float d = fp16_to_fp32(b.d);
    a.d[kLaneOfBlock[k]] = d;
    a.d[kLaneOfBlock[k] + 1] = d;
    a.s[kLaneOfBlock[k]] = fp16_to_fp32(b.s);
}

// Writes quad number q of a row into its token half of the pair row `out`.
template <class Quad>
void store_half(const Quad& a, int64_t q, int half, uint8_t* out) {
    uint8_t* pair = out + static_cast<size_t>(q) * 2 * sizeof(Quad);
    for (size_t f = 0; f < sizeof(Quad); f += kQuadField) {
        std::memcpy(pair + 2 * f + kQuadField * half, reinterpret_cast<const uint8_t*>(&a) + f, kQuadField);
    }
}

// True when a row of nb blocks ends in a two-block quad (see kTail2Bytes).
bool has_tail2(int64_t nb) { return nb % kQuadBlocks == 2; }

// The tail2 fields of blocks a and b (element order in act_quads.h).
template <class Block>
void store_tail2(const Block& a, const Block& b, int64_t quads, size_t quad_bytes, int half, uint8_t* out) {
    int8_t t[2][32];
    for (int u = 0; u < 2; ++u) {
        for (int l = 0; l < 8; ++l) {
            const int8_t* qs = (l < 4 ? a : b).qs;
            std::memcpy(t[u] + 4 * l, qs + 16 * ((l % 4) / 2) + 8 * u + 4 * (l % 2), 4);
        }
    }
    uint8_t* pair = out + static_cast<size_t>(quads) * 2 * quad_bytes;
    for (int u = 0; u < 2; ++u) std::memcpy(pair + 2 * kQuadField * u + kQuadField * half, t[u], kQuadField);
}

// Quads q0 on (those before written already).
template <class Block, class Quad, void (*kPut)(const Block&, int, Quad&)>
void prepare(int64_t nb, const uint8_t* q_row, int half, uint8_t* out, int64_t q0) {
    const auto* y = reinterpret_cast<const Block*>(q_row);
    int64_t q = q0;
    for (; q * kQuadBlocks < nb; ++q) {
        Quad a{};  // zero: blocks past the row end contribute nothing
        for (int k = 0; k < kQuadBlocks && q * kQuadBlocks + k < nb; ++k) kPut(y[q * kQuadBlocks + k], k, a);
        store_half(a, q, half, out);
    }
    if (has_tail2(nb)) store_tail2(y[nb - 2], y[nb - 1], q, sizeof(Quad), half, out);
}

void prepare_q8_k(int64_t nb, const uint8_t* q_row, int half, uint8_t* out) {
    const auto* y = reinterpret_cast<const BlockQ8_K*>(q_row);
    for (int64_t i = 0; i < nb; ++i) {
        ActSuperQ8_K a;
        for (int sub = 0; sub < 8; ++sub) {
            for (int j = 0; j < 8; ++j) std::memcpy(a.qs[j] + 4 * sub, y[i].qs + 32 * sub + 4 * j, 4);
            a.d[sub] = y[i].d;
            a.msum[sub] = y[i].d * static_cast<float>(y[i].bsums[2 * sub] + y[i].bsums[2 * sub + 1]);
            for (int h = 0; h < 2; ++h) a.neg32[h][sub] = -32 * y[i].bsums[2 * sub + h];
        }
        store_half(a, i, half, out);
    }
}

}  // namespace

size_t act_quad_pairs_bytes(GgmlType act, int64_t n) {
    if (act == GgmlType::Q8_K) return 2 * static_cast<size_t>(n / kQKK) * sizeof(ActSuperQ8_K);
    TS_CHECK(act == GgmlType::Q8_0 || act == GgmlType::Q8_1);
    const size_t quads = static_cast<size_t>((n / kQK + kQuadBlocks - 1) / kQuadBlocks);
    return 2 * quads * (act == GgmlType::Q8_0 ? sizeof(ActQuad) : sizeof(ActQuadQ8_1)) +
           (has_tail2(n / kQK) ? 2 * kTail2Bytes : 0);
}

void prepare_act_quads(GgmlType act, int64_t n, const uint8_t* q_row, int half, uint8_t* out, SimdLevel level) {
    TS_CHECK(n % kQK == 0 && (half == 0 || half == 1));
    if (act == GgmlType::Q8_K) {
        TS_CHECK(n % kQKK == 0);
        if (level >= SimdLevel::Avx512Vnni) {
            x86::avx512_prepare_full_quads(act, n / kQKK, q_row, half, out);
        } else {
            prepare_q8_k(n / kQKK, q_row, half, out);
        }
        return;
    }
    TS_CHECK(act == GgmlType::Q8_0 || act == GgmlType::Q8_1);
    const int64_t q0 = level >= SimdLevel::Avx512Vnni ? x86::avx512_prepare_full_quads(act, n / kQK, q_row, half, out)
                       : level == SimdLevel::Avx2     ? x86::avx2_prepare_full_quads(act, n / kQK, q_row, half, out)
                                                      : 0;
    if (act == GgmlType::Q8_0) {
        prepare<BlockQ8_0, ActQuad, put_q8_0>(n / kQK, q_row, half, out, q0);
    } else {
        prepare<BlockQ8_1, ActQuadQ8_1, put_q8_1>(n / kQK, q_row, half, out, q0);
    }
}

}  // namespace tessera
