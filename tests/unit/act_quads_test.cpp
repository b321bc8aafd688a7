// The SIMD pair-row preparations (AVX2, AVX-512 VNNI) write exactly the
// bytes of the plain one, at every level this CPU runs, for both token halves, row lengths with and without a partial
// last quad or a two-block tail, and random block bytes (scales included:
// any fp16, NaNs and subnormals among them).
#include "kernels/act_quads.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "tensor/quant_blocks.h"

namespace tessera {
namespace {

TEST(ActQuadsTest, SimdPreparationWritesThePlainBytes) {
    if (best_simd_level() == SimdLevel::Scalar) GTEST_SKIP() << "no SIMD level on this CPU";
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> byte(0, 255);
    for (int l = static_cast<int>(SimdLevel::Avx2); l <= static_cast<int>(best_simd_level()); ++l) {
        const auto level = static_cast<SimdLevel>(l);
        for (GgmlType act : {GgmlType::Q8_0, GgmlType::Q8_1, GgmlType::Q8_K}) {
            const size_t block = act == GgmlType::Q8_0   ? sizeof(BlockQ8_0)
                                 : act == GgmlType::Q8_1 ? sizeof(BlockQ8_1)
                                                         : sizeof(BlockQ8_K);
            for (int64_t nb : {1, 2, 4, 5, 6, 7, 8, 18, 48, 64, 176}) {
                const int64_t n = nb * (act == GgmlType::Q8_K ? kQKK : kQK);
                std::vector<uint8_t> row(block * static_cast<size_t>(nb));
                for (auto& b : row) b = static_cast<uint8_t>(byte(rng));
                const size_t bytes = act_quad_pairs_bytes(act, n);
                for (int half : {0, 1}) {
                    // Different fill bytes: whatever one build leaves unwritten shows up.
                    std::vector<uint8_t> plain(bytes, 0xAA), simd(bytes, 0xAA), simd_other(bytes, 0x55);
                    prepare_act_quads(act, n, row.data(), half, plain.data(), SimdLevel::Scalar);
                    prepare_act_quads(act, n, row.data(), half, simd.data(), level);
                    prepare_act_quads(act, n, row.data(), half, simd_other.data(), level);
                    EXPECT_EQ(plain, simd) << ggml_type_name(act) << " blocks " << nb << " half " << half << " "
                                           << simd_level_name(level);
                    // The half's own bytes do not depend on what was there before.
                    for (size_t i = 0; i < bytes; ++i) {
                        if (simd[i] != 0xAA || simd_other[i] != 0x55) {
                            ASSERT_EQ(simd[i], simd_other[i]) << "byte " << i;
                        }
                    }
                }
            }
        }
    }
}

}  // namespace
}  // namespace tessera
