// The AMX tiles' dispatch and their activation layout (plain C++: once per
// token and matmul, next to 16-row tiles over the whole row).
#include "kernels/amx_tiles.h"

#include <cstring>
#include <type_traits>

#include "core/check.h"
#include "kernels/cpu/amx_x86.h"
#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"

namespace tessera {
namespace {

constexpr size_t round_up_64(size_t x) { return (x + 63) / 64 * 64; }

template <class Block>
void prepare_row(const uint8_t* q_row, int64_t nb, uint8_t* out) {
    const auto* blocks = reinterpret_cast<const Block*>(q_row);
    uint8_t* scales = out + nb * kQK;
    for (int64_t b = 0; b < nb; ++b) {
        // Half h holds elements 8j + 4h + e: four runs of four bytes.
        for (int h = 0; h < 2; ++h) {
            for (int j = 0; j < 4; ++j) std::memcpy(out + b * kQK + h * 16 + j * 4, blocks[b].qs + 8 * j + 4 * h, 4);
        }
        const float d = fp16_to_fp32(blocks[b].d);
        std::memcpy(scales + b * sizeof(float), &d, sizeof d);
        if constexpr (std::is_same_v<Block, BlockQ8_1>) {
            const float s = fp16_to_fp32(blocks[b].s);
            std::memcpy(scales + (nb + b) * sizeof(float), &s, sizeof s);
        }
    }
}

// Q8_K: the qs as they are (sub-block L is 32 contiguous bytes), then d,
// then d * (sum of sub-block L's qs) for L < 8, as act_quads.cpp's msum.
void prepare_q8_k_row(const uint8_t* q_row, int64_t nb, uint8_t* out) {
    const auto* blocks = reinterpret_cast<const BlockQ8_K*>(q_row);
    uint8_t* d_at = out + nb * kQKK;
    uint8_t* msum_at = d_at + nb * sizeof(float);
    for (int64_t b = 0; b < nb; ++b) {
        std::memcpy(out + b * kQKK, blocks[b].qs, kQKK);
        std::memcpy(d_at + b * sizeof(float), &blocks[b].d, sizeof(float));
        for (int sub = 0; sub < 8; ++sub) {
            const float m = blocks[b].d * static_cast<float>(blocks[b].bsums[2 * sub] + blocks[b].bsums[2 * sub + 1]);
            std::memcpy(msum_at + (b * 8 + sub) * sizeof(float), &m, sizeof m);
        }
    }
}

}  // namespace

AmxTilesFn find_amx_tiles(GgmlType weight, SimdLevel level) {
    TS_CHECK(static_cast<int>(level) <= static_cast<int>(best_simd_level()));
    return level == SimdLevel::Avx512Amx ? x86::amx_tiles(weight) : nullptr;
}

size_t amx_act_row_bytes(GgmlType act, int64_t n) {
    if (act == GgmlType::Q8_K) {
        TS_CHECK(n % kQKK == 0);
        const auto nb = static_cast<size_t>(n / kQKK);
        return round_up_64(nb * kQKK + 9 * nb * sizeof(float));
    }
    TS_CHECK((act == GgmlType::Q8_0 || act == GgmlType::Q8_1) && n % kQK == 0);
    const auto nb = static_cast<size_t>(n / kQK);
    const size_t floats = act == GgmlType::Q8_1 ? 2 : 1;
    return round_up_64(nb * kQK + floats * nb * sizeof(float));
}

void prepare_amx_act_row(GgmlType act, const uint8_t* q_row, int64_t n, uint8_t* out) {
    if (act == GgmlType::Q8_K) {
        TS_CHECK(n % kQKK == 0);
        prepare_q8_k_row(q_row, n / kQKK, out);
        return;
    }
    TS_CHECK((act == GgmlType::Q8_0 || act == GgmlType::Q8_1) && n % kQK == 0);
    if (act == GgmlType::Q8_0) {
        prepare_row<BlockQ8_0>(q_row, n / kQK, out);
    } else {
        prepare_row<BlockQ8_1>(q_row, n / kQK, out);
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
