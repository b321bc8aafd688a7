#include "kernels/kv_rotation.h"

#include <cmath>

#include "core/check.h"

namespace tessera {

void hadamard_blocks(float* x, int64_t n, int size) {
    TS_CHECK(size > 0 && (size & (size - 1)) == 0 && n % size == 0);
    const float scale = 1.0f / std::sqrt(static_cast<float>(size));
    for (float* b = x; b < x + n; b += size) {
        // Fast transform: log2(size) rounds of butterflies over pairs h apart.
        for (int h = 1; h < size; h *= 2) {
            for (int i = 0; i < size; i += 2 * h) {
                for (int j = i; j < i + h; ++j) {
                    const float a = b[j], c = b[j + h];
                    b[j] = a + c;
                    b[j + h] = a - c;
                }
            }
        }
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
