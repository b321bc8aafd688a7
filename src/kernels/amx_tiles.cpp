// The AMX tiles' dispatch and their activation layout (plain C++: once per
// token and matmul, next to 16-row tiles over the whole row).
#include "kernels/amx_tiles.h"

#include <cstring>
#include <type_traits>

#include "core/check.h"
#include "kernels/cpu/amx_x86.h"
#include "tensor/fp16.h"
#include "tensor/quant.h"
#include "tensor/quant_blocks.h"

namespace tessera {
namespace {

constexpr size_t round_up_64(size_t x) { return (x + 63) / 64 * 64; }

// Floats per block and token in a group's scales.
int block_floats(GgmlType act) {
    if (act == GgmlType::Q8_K) return x86::kAmxQ8_KFloats;
    return act == GgmlType::Q8_1 ? x86::kAmxQ8_1Floats : x86::kAmxQ8_0Floats;
}

template <class Block>
void prepare_row(const uint8_t* q_row, int64_t nb, uint8_t* out, float* scales, int slot) {
    constexpr int kFloats = std::is_same_v<Block, BlockQ8_1> ? x86::kAmxQ8_1Floats : x86::kAmxQ8_0Floats;
    const auto* blocks = reinterpret_cast<const Block*>(q_row);
    for (int64_t b = 0; b < nb; ++b) {
        // Half h holds elements 8j + 4h + e: four runs of four bytes.
        for (int h = 0; h < 2; ++h) {
            for (int j = 0; j < 4; ++j) std::memcpy(out + b * kQK + h * 16 + j * 4, blocks[b].qs + 8 * j + 4 * h, 4);
        }
        scales[(b * kFloats) * kAmxTileTokens + slot] = fp16_to_fp32(blocks[b].d);
        if constexpr (kFloats == 2) scales[(b * kFloats + 1) * kAmxTileTokens + slot] = fp16_to_fp32(blocks[b].s);
    }
}

// Q8_K: the qs as they are (sub-block L is 32 contiguous bytes); d, then d *
// (sum of sub-block L's qs) for L < 8, as act_quads.cpp's msum. The copy
// puts every 32-byte tile row on a 32-byte boundary: the tiles reading the
// Q8_K rows in place (292-byte blocks, rows straddling cache lines) ran at
// 0.84x (matmul_level_ab q4_k 1536 768 64, three alternations).
void prepare_q8_k_row(const uint8_t* q_row, int64_t nb, uint8_t* out, float* scales, int slot) {
    const auto* blocks = reinterpret_cast<const BlockQ8_K*>(q_row);
    for (int64_t b = 0; b < nb; ++b) {
        std::memcpy(out + b * kQKK, blocks[b].qs, kQKK);
        float* f = scales + b * x86::kAmxQ8_KFloats * kAmxTileTokens + slot;
        f[0] = blocks[b].d;
        for (int sub = 0; sub < 8; ++sub) {
            f[(1 + sub) * kAmxTileTokens] =
                blocks[b].d * static_cast<float>(blocks[b].bsums[2 * sub] + blocks[b].bsums[2 * sub + 1]);
        }
    }
}

}  // namespace

AmxTilesFn find_amx_tiles(GgmlType weight, SimdLevel level) {
    TS_CHECK(static_cast<int>(level) <= static_cast<int>(best_simd_level()));
    return level == SimdLevel::Avx512Amx ? x86::amx_tiles(weight) : nullptr;
}

int amx_min_tokens(GgmlType weight) { return weight == GgmlType::Q4_K ? kAmxTileTokens : 2 * kAmxTileTokens; }

size_t amx_act_row_bytes(GgmlType act, int64_t n) {
    TS_CHECK(act == GgmlType::Q8_0 || act == GgmlType::Q8_1 || act == GgmlType::Q8_K);
    TS_CHECK(n % block_elems(act) == 0);
    return round_up_64(static_cast<size_t>(n));  // one byte an element
}

size_t amx_scale_floats(GgmlType act, int64_t n) {
    TS_CHECK(act == GgmlType::Q8_0 || act == GgmlType::Q8_1 || act == GgmlType::Q8_K);
    TS_CHECK(n % block_elems(act) == 0);
    return static_cast<size_t>(n / block_elems(act)) * block_floats(act) * kAmxTileTokens;
}

void prepare_amx_act_row(GgmlType act, const uint8_t* q_row, int64_t n, uint8_t* out, float* group_scales, int slot) {
    TS_CHECK(n % block_elems(act) == 0 && slot >= 0 && slot < kAmxTileTokens);
    switch (act) {
        case GgmlType::Q8_0: prepare_row<BlockQ8_0>(q_row, n / kQK, out, group_scales, slot); return;
        case GgmlType::Q8_1: prepare_row<BlockQ8_1>(q_row, n / kQK, out, group_scales, slot); return;
        case GgmlType::Q8_K: prepare_q8_k_row(q_row, n / kQKK, out, group_scales, slot); return;
        default: TS_CHECK_MSG(false, "prepare_amx_act_row: not a Q8_0, Q8_1 or Q8_K row");
    }
}

size_t amx_weight_scratch_bytes(GgmlType weight, int64_t n) {
    if (weight == GgmlType::Q4_K) {
        TS_CHECK(n % kQKK == 0);
        return static_cast<size_t>(n / kQKK) * x86::kAmxSuperBytes;
    }
    TS_CHECK(n % kQK == 0);
    return static_cast<size_t>(n / kQK) * x86::kAmxBlockBytes;
}

}  // namespace tessera
