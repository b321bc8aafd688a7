// Scalar reference code for the 32-element block formats (Q4_0, Q4_1, Q5_0,
// Q5_1, Q8_0, Q8_1): dequantization, quantization and dot products. Bit-exact
// with ggml's reference implementation, which the golden tests check.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "tensor/fp16.h"
#include "tensor/quant_impl.h"

// Results must not depend on whether the compiler fuses a*b+c into an FMA:
// ggml's reference code and numpy round after every operation.
#pragma GCC optimize("fp-contract=off")

namespace tessera::quant_detail {
namespace {

float abs_max(const float* x, int n) {
    float amax = 0.0f;
    for (int j = 0; j < n; ++j) amax = std::max(amax, std::fabs(x[j]));
    return amax;
}

// The element with the largest magnitude (first one on ties), sign kept.
float signed_abs_max(const float* x, int n) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; ++j) {
        if (std::fabs(x[j]) > amax) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    }
    return max;
}

void min_max(const float* x, int n, float* mn, float* mx) {
    *mn = x[0];
    *mx = x[0];
    for (int j = 1; j < n; ++j) {
        *mn = std::min(*mn, x[j]);
        *mx = std::max(*mx, x[j]);
    }
}

// The 5-bit value of element j of a Q5 block.
int q5_value(const uint8_t* qs, const uint8_t* qh, int j) {
    uint32_t h;
    std::memcpy(&h, qh, sizeof h);
    const int lo = j < 16 ? (qs[j] & 0xF) : (qs[j - 16] >> 4);
    return lo | static_cast<int>(((h >> j) & 1u) << 4);
}

// Packs 32 values of 0..15 (or the low 4 bits of 0..31) into nibbles and the
// fifth bits into qh (when qh is not null).
void pack_nibbles(const uint8_t* q, uint8_t* qs, uint8_t* qh) {
    uint32_t h = 0;
    for (int j = 0; j < 16; ++j) {
        qs[j] = static_cast<uint8_t>((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4));
    }
    for (int j = 0; j < 32; ++j) h |= static_cast<uint32_t>((q[j] >> 4) & 1) << j;
    if (qh != nullptr) std::memcpy(qh, &h, sizeof h);
}

// Symmetric scale with the largest-magnitude element mapped to -levels/2.
float symmetric_scale(const float* x, int half_levels, uint8_t* q, int qmax) {
    const float max = signed_abs_max(x, kQK);
    const float d = max / static_cast<float>(-half_levels);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const float offset = static_cast<float>(half_levels) + 0.5f;
    for (int j = 0; j < kQK; ++j) {
        q[j] = static_cast<uint8_t>(std::min(qmax, static_cast<int>(static_cast<int8_t>(x[j] * id + offset))));
    }
    return d;
}

// Affine scale over [min, max] with qmax + 1 levels.
float affine_scale(const float* x, int qmax, uint8_t* q, float* min_out) {
    float mn, mx;
    min_max(x, kQK, &mn, &mx);
    const float d = (mx - mn) / static_cast<float>(qmax);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < kQK; ++j) {
        q[j] = static_cast<uint8_t>(std::min(qmax, static_cast<int>(static_cast<int8_t>((x[j] - mn) * id + 0.5f))));
    }
    *min_out = mn;
    return d;
}

// The weighted search's symmetric scale d (stored as fp16) and the values
// q = round(x / d) + half_levels in [0, 2 * half_levels).
float weighted_symmetric(const float* x, const float* importance, int half_levels, uint8_t* q) {
    float w[kQK];
    element_weights(x, kQK, importance, w);
    const float d = fp16_to_fp32(fp32_to_fp16(fit_symmetric(x, w, kQK, half_levels)));
    for (int j = 0; j < kQK; ++j) {
        const int v = d != 0.0f ? round_clamp(x[j] / d, -half_levels, half_levels - 1) : 0;
        q[j] = static_cast<uint8_t>(v + half_levels);
    }
    return d;
}

// The same for x ~ d * q + min with q in [0, qmax] (min <= 0, as the
// K-quants' search fits it).
float weighted_affine(const float* x, const float* importance, int qmax, uint8_t* q, float* min_out) {
    float w[kQK];
    element_weights(x, kQK, importance, w);
    const AffineFit fit = fit_affine(x, w, kQK, qmax);
    const float d = fp16_to_fp32(fp32_to_fp16(fit.scale));
    const float mn = fp16_to_fp32(fp32_to_fp16(-fit.min));
    for (int j = 0; j < kQK; ++j) q[j] = static_cast<uint8_t>(d > 0.0f ? round_clamp((x[j] - mn) / d, 0, qmax) : 0);
    *min_out = mn;
    return d;
}

// x86 activation quantizer: multiplier 127/amax, round half to even.
float quantize_act_block(const float* x, int8_t* qs, int* sum) {
    const float amax = abs_max(x, kQK);
    const float d = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    int s = 0;
    for (int j = 0; j < kQK; ++j) {
        const int v = quantized_value(x[j] * id);
        qs[j] = static_cast<int8_t>(v);
        s += v;
    }
    *sum = s;
    return d;
}

}  // namespace

void dequantize_q4_0(const BlockQ4_0* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16_to_fp32(x[i].d);
        for (int j = 0; j < 16; ++j) {
            y[j] = static_cast<float>((x[i].qs[j] & 0xF) - 8) * d;
            y[j + 16] = static_cast<float>((x[i].qs[j] >> 4) - 8) * d;
        }
    }
}

void dequantize_q4_1(const BlockQ4_1* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16_to_fp32(x[i].d), m = fp16_to_fp32(x[i].m);
        for (int j = 0; j < 16; ++j) {
            y[j] = d * static_cast<float>(x[i].qs[j] & 0xF) + m;
            y[j + 16] = d * static_cast<float>(x[i].qs[j] >> 4) + m;
        }
    }
}

void dequantize_q5_0(const BlockQ5_0* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16_to_fp32(x[i].d);
        for (int j = 0; j < kQK; ++j) y[j] = d * static_cast<float>(q5_value(x[i].qs, x[i].qh, j) - 16);
    }
}

void dequantize_q5_1(const BlockQ5_1* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16_to_fp32(x[i].d), m = fp16_to_fp32(x[i].m);
        for (int j = 0; j < kQK; ++j) y[j] = d * static_cast<float>(q5_value(x[i].qs, x[i].qh, j)) + m;
    }
}

void dequantize_q8_0(const BlockQ8_0* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16_to_fp32(x[i].d);
        for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(x[i].qs[j]) * d;
    }
}

void dequantize_q8_1(const BlockQ8_1* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16_to_fp32(x[i].d);
        for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(x[i].qs[j]) * d;
    }
}

void quantize_q4_0_ref(const float* x, BlockQ4_0* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        uint8_t q[kQK];
        y[i].d = fp32_to_fp16(symmetric_scale(x, 8, q, 15));
        pack_nibbles(q, y[i].qs, nullptr);
    }
}

void quantize_q4_1_ref(const float* x, BlockQ4_1* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        uint8_t q[kQK];
        float mn;
        y[i].d = fp32_to_fp16(affine_scale(x, 15, q, &mn));
        y[i].m = fp32_to_fp16(mn);
        pack_nibbles(q, y[i].qs, nullptr);
    }
}

void quantize_q5_0_ref(const float* x, BlockQ5_0* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        uint8_t q[kQK];
        y[i].d = fp32_to_fp16(symmetric_scale(x, 16, q, 31));
        pack_nibbles(q, y[i].qs, y[i].qh);
    }
}

void quantize_q5_1_ref(const float* x, BlockQ5_1* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        uint8_t q[kQK];
        float mn;
        y[i].d = fp32_to_fp16(affine_scale(x, 31, q, &mn));
        y[i].m = fp32_to_fp16(mn);
        pack_nibbles(q, y[i].qs, y[i].qh);
    }
}

// With an importance matrix the legacy formats' scale (and minimum) come
// from the weighted search the K-quants use instead of the block's extremes:
// rounding error moves to the columns whose inputs are small.
void quantize_q4_0_weighted(const float* x, BlockQ4_0* y, int64_t nb, const float* importance) {
    for (int64_t i = 0; i < nb; ++i, x += kQK, importance = importance_at(importance, kQK)) {
        uint8_t q[kQK];
        y[i].d = fp32_to_fp16(weighted_symmetric(x, importance, 8, q));
        pack_nibbles(q, y[i].qs, nullptr);
    }
}

void quantize_q4_1_weighted(const float* x, BlockQ4_1* y, int64_t nb, const float* importance) {
    for (int64_t i = 0; i < nb; ++i, x += kQK, importance = importance_at(importance, kQK)) {
        uint8_t q[kQK];
        float mn;
        y[i].d = fp32_to_fp16(weighted_affine(x, importance, 15, q, &mn));
        y[i].m = fp32_to_fp16(mn);
        pack_nibbles(q, y[i].qs, nullptr);
    }
}

void quantize_q5_0_weighted(const float* x, BlockQ5_0* y, int64_t nb, const float* importance) {
    for (int64_t i = 0; i < nb; ++i, x += kQK, importance = importance_at(importance, kQK)) {
        uint8_t q[kQK];
        y[i].d = fp32_to_fp16(weighted_symmetric(x, importance, 16, q));
        pack_nibbles(q, y[i].qs, y[i].qh);
    }
}

void quantize_q5_1_weighted(const float* x, BlockQ5_1* y, int64_t nb, const float* importance) {
    for (int64_t i = 0; i < nb; ++i, x += kQK, importance = importance_at(importance, kQK)) {
        uint8_t q[kQK];
        float mn;
        y[i].d = fp32_to_fp16(weighted_affine(x, importance, 31, q, &mn));
        y[i].m = fp32_to_fp16(mn);
        pack_nibbles(q, y[i].qs, y[i].qh);
    }
}

void quantize_q8_0_ref(const float* x, BlockQ8_0* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        const float d = abs_max(x, kQK) / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = fp32_to_fp16(d);
        for (int j = 0; j < kQK; ++j) y[i].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
    }
}

void quantize_q8_0_act(const float* x, BlockQ8_0* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        int sum;
        y[i].d = fp32_to_fp16(quantize_act_block(x, y[i].qs, &sum));
    }
}

void quantize_q8_1_act(const float* x, BlockQ8_1* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        int sum;
        const float d = quantize_act_block(x, y[i].qs, &sum);
        y[i].d = fp32_to_fp16(d);
        y[i].s = fp32_to_fp16(d * static_cast<float>(sum));
    }
}

float dot_q4_0_q8_0(const BlockQ4_0* x, const BlockQ8_0* y, int64_t nb) {
    float sum = 0.0f;
    for (int64_t i = 0; i < nb; ++i) {
        int sumi = 0;
        for (int j = 0; j < 16; ++j) {
            sumi += ((x[i].qs[j] & 0xF) - 8) * y[i].qs[j];
            sumi += ((x[i].qs[j] >> 4) - 8) * y[i].qs[j + 16];
        }
        sum += static_cast<float>(sumi) * (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d));
    }
    return sum;
}

float dot_q4_1_q8_1(const BlockQ4_1* x, const BlockQ8_1* y, int64_t nb) {
    float sum = 0.0f;
    for (int64_t i = 0; i < nb; ++i) {
        int sumi = 0;
        for (int j = 0; j < 16; ++j) {
            sumi += (x[i].qs[j] & 0xF) * y[i].qs[j];
            sumi += (x[i].qs[j] >> 4) * y[i].qs[j + 16];
        }
        sum += static_cast<float>(sumi) * (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d)) +
               fp16_to_fp32(x[i].m) * fp16_to_fp32(y[i].s);
    }
    return sum;
}

float dot_q5_0_q8_0(const BlockQ5_0* x, const BlockQ8_0* y, int64_t nb) {
    float sum = 0.0f;
    for (int64_t i = 0; i < nb; ++i) {
        int sumi = 0;
        for (int j = 0; j < kQK; ++j) sumi += (q5_value(x[i].qs, x[i].qh, j) - 16) * y[i].qs[j];
        sum += static_cast<float>(sumi) * (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d));
    }
    return sum;
}

float dot_q5_1_q8_1(const BlockQ5_1* x, const BlockQ8_1* y, int64_t nb) {
    float sum = 0.0f;
    for (int64_t i = 0; i < nb; ++i) {
        int sumi = 0;
        for (int j = 0; j < kQK; ++j) sumi += q5_value(x[i].qs, x[i].qh, j) * y[i].qs[j];
        sum += static_cast<float>(sumi) * (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d)) +
               fp16_to_fp32(x[i].m) * fp16_to_fp32(y[i].s);
    }
    return sum;
}

float dot_q8_0_q8_0(const BlockQ8_0* x, const BlockQ8_0* y, int64_t nb) {
    float sum = 0.0f;
    for (int64_t i = 0; i < nb; ++i) {
        int sumi = 0;
        for (int j = 0; j < kQK; ++j) sumi += x[i].qs[j] * y[i].qs[j];
        sum += static_cast<float>(sumi) * (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d));
    }
    return sum;
}

}  // namespace tessera::quant_detail
