// The AMX tiles' dispatch and their activation layout (plain C++: once per
// token and matmul, next to 16-row tiles over the whole row).
#include "kernels/amx_tiles.h"

#include <cstring>

#include "core/check.h"
#include "kernels/cpu/amx_x86.h"
#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"

namespace tessera {
namespace {

constexpr size_t round_up_64(size_t x) { return (x + 63) / 64 * 64; }

}  // namespace

AmxTilesFn find_amx_tiles(GgmlType weight, SimdLevel level) {
    TS_CHECK(static_cast<int>(level) <= static_cast<int>(best_simd_level()));
    return level == SimdLevel::Avx512Amx ? x86::amx_tiles(weight) : nullptr;
}

size_t amx_act_row_bytes(int64_t n) {
    TS_CHECK(n % kQK == 0);
    const auto nb = static_cast<size_t>(n / kQK);
    return round_up_64(nb * kQK + nb * sizeof(float));
}

void prepare_amx_act_row(const uint8_t* q8_0_row, int64_t n, uint8_t* out) {
    TS_CHECK(n % kQK == 0);
    const int64_t nb = n / kQK;
    const auto* blocks = reinterpret_cast<const BlockQ8_0*>(q8_0_row);
    auto* scales = reinterpret_cast<float*>(out + nb * kQK);
    for (int64_t b = 0; b < nb; ++b) {
        // Half h holds elements 8j + 4h + e: four runs of four bytes.
        for (int h = 0; h < 2; ++h) {
            for (int j = 0; j < 4; ++j) std::memcpy(out + b * kQK + h * 16 + j * 4, blocks[b].qs + 8 * j + 4 * h, 4);
        }
        const float d = fp16_to_fp32(blocks[b].d);
        std::memcpy(scales + b, &d, sizeof d);
    }
}

size_t amx_weight_scratch_bytes(int64_t n) {
    TS_CHECK(n % kQK == 0);
    return static_cast<size_t>(n / kQK) * x86::kAmxBlockBytes;
}

}  // namespace tessera
