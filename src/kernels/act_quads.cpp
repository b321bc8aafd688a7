// Builds the ActQuad layout from Q8_0 blocks (plain C++: it runs once per
// token and matmul, not per weight row).
#include "kernels/act_quads.h"

#include <cstring>

#include "core/check.h"
#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"

namespace tessera {

size_t act_quads_bytes(int64_t n) {
    const int64_t nb = n / kQK;
    return static_cast<size_t>((nb + kQuadBlocks - 1) / kQuadBlocks) * sizeof(ActQuad);
}

void prepare_act_quads(int64_t n, const uint8_t* q8_row, uint8_t* out) {
    TS_CHECK(n % kQK == 0);
    const int64_t nb = n / kQK;
    const auto* y = reinterpret_cast<const BlockQ8_0*>(q8_row);
    for (int64_t q = 0; q * kQuadBlocks < nb; ++q) {
        ActQuad a{};  // zero: blocks past the row end contribute nothing
        static constexpr int kLaneOfBlock[kQuadBlocks] = {0, 4, 2, 6};  // first lane after the hadd
        for (int k = 0; k < kQuadBlocks && q * kQuadBlocks + k < nb; ++k) {
            const BlockQ8_0& b = y[q * kQuadBlocks + k];
            const int pair = k / 2, half = (k % 2) * 16;
            std::memcpy(a.lo[pair] + half, b.qs, 16);
            std::memcpy(a.hi[pair] + half, b.qs + 16, 16);
            for (int l = 0; l < 4; ++l) {
                int32_t s = 0;
                for (int e = 0; e < 4; ++e) s += b.qs[4 * l + e] + b.qs[16 + 4 * l + e];
                a.neg8[pair][half / 4 + l] = -8 * s;
                a.neg128[pair][half / 4 + l] = -128 * s;
            }
            const float d = fp16_to_fp32(b.d);
            a.d[kLaneOfBlock[k]] = d;
            a.d[kLaneOfBlock[k] + 1] = d;
        }
        std::memcpy(out + static_cast<size_t>(q) * sizeof(ActQuad), &a, sizeof a);
    }
}

}  // namespace tessera
