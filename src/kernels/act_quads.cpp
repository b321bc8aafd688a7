// Builds the ActQuad / ActQuadQ8_1 layouts from Q8_0 / Q8_1 blocks (plain
// C++: it runs once per token and matmul, not per weight row).
#include "kernels/act_quads.h"

#include <cstring>

#include "core/check.h"
#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"

namespace tessera {
namespace {

// Position of block k of a quad in the lane order (a a c c b b d d).
constexpr int kLaneOfBlock[kQuadBlocks] = {0, 4, 2, 6};

// The byte halves of block k into a quad's lo/hi pairs.
template <class Quad>
void put_bytes(const int8_t* qs, int k, Quad& a) {
    const int pair = k / 2, half = (k % 2) * 16;
    std::memcpy(a.lo[pair] + half, qs, 16);
    std::memcpy(a.hi[pair] + half, qs + 16, 16);
}

void put_q8_0(const BlockQ8_0& b, int k, ActQuad& a) {
    put_bytes(b.qs, k, a);
    const int pair = k / 2, lane0 = (k % 2) * 4;
    for (int l = 0; l < 4; ++l) {
        int32_t s = 0;
        for (int e = 0; e < 4; ++e) s += b.qs[4 * l + e] + b.qs[16 + 4 * l + e];
        a.neg8[pair][lane0 + l] = -8 * s;
        a.neg128[pair][lane0 + l] = -128 * s;
    }
    const float d = fp16_to_fp32(b.d);
    a.d[kLaneOfBlock[k]] = d;
    a.d[kLaneOfBlock[k] + 1] = d;
}

void put_q8_1(const BlockQ8_1& b, int k, ActQuadQ8_1& a) {
    put_bytes(b.qs, k, a);
    const float d = fp16_to_fp32(b.d);
    a.d[kLaneOfBlock[k]] = d;
    a.d[kLaneOfBlock[k] + 1] = d;
    a.s[kLaneOfBlock[k]] = fp16_to_fp32(b.s);
}

template <class Block, class Quad, void (*kPut)(const Block&, int, Quad&)>
void prepare(int64_t nb, const uint8_t* q_row, uint8_t* out) {
    const auto* y = reinterpret_cast<const Block*>(q_row);
    for (int64_t q = 0; q * kQuadBlocks < nb; ++q) {
        Quad a{};  // zero: blocks past the row end contribute nothing
        for (int k = 0; k < kQuadBlocks && q * kQuadBlocks + k < nb; ++k) kPut(y[q * kQuadBlocks + k], k, a);
        std::memcpy(out + static_cast<size_t>(q) * sizeof(Quad), &a, sizeof a);
    }
}

}  // namespace

size_t act_quads_bytes(GgmlType act, int64_t n) {
    TS_CHECK(act == GgmlType::Q8_0 || act == GgmlType::Q8_1);
    const size_t quads = static_cast<size_t>((n / kQK + kQuadBlocks - 1) / kQuadBlocks);
    return quads * (act == GgmlType::Q8_0 ? sizeof(ActQuad) : sizeof(ActQuadQ8_1));
}

void prepare_act_quads(GgmlType act, int64_t n, const uint8_t* q_row, uint8_t* out) {
    TS_CHECK(n % kQK == 0);
    if (act == GgmlType::Q8_0) {
        prepare<BlockQ8_0, ActQuad, put_q8_0>(n / kQK, q_row, out);
    } else {
        TS_CHECK(act == GgmlType::Q8_1);
        prepare<BlockQ8_1, ActQuadQ8_1, put_q8_1>(n / kQK, q_row, out);
    }
}

}  // namespace tessera
