// Scalar reference code for the 256-element K-quant formats (Q4_K, Q5_K,
// Q6_K) and their activation partner Q8_K: dequantization, Q8_K quantization
// and dot products. Dequantization is bit-exact with ggml / gguf-py.
#include <algorithm>
#include <cmath>

#include "tensor/fp16.h"
#include "tensor/quant_impl.h"

// Match ggml's rounding after every operation (no fused multiply-add).
#pragma GCC optimize("fp-contract=off")

namespace tessera::quant_detail {
namespace {

// 4-bit part of element e (0..255) of a Q4_K/Q5_K block: 64-element chunks
// whose first 32 elements are low nibbles and next 32 high nibbles.
int k_nibble(const uint8_t* qs, int e) {
    const int chunk = e / 64, within = e % 64;
    const uint8_t byte = qs[32 * chunk + within % 32];
    return within < 32 ? (byte & 0xF) : (byte >> 4);
}

int q5k_value(const BlockQ5_K& b, int e) {
    return k_nibble(b.qs, e) | (((b.qh[e % 32] >> (e / 32)) & 1) << 4);
}

// 6-bit value (0..63, before the -32 offset) of element e of a Q6_K block.
int q6k_value(const BlockQ6_K& b, int e) {
    const int half = e / 128, w = e % 128;
    const int lo = (b.ql[64 * half + w % 64] >> (4 * (w / 64))) & 0xF;
    const int hi = (b.qh[32 * half + w % 32] >> (2 * (w / 32))) & 3;
    return lo | (hi << 4);
}

int q8k_dot32(const int8_t* y, const int* q) {
    int s = 0;
    for (int l = 0; l < 32; ++l) s += q[l] * y[l];
    return s;
}

// Shared by Q4_K and Q5_K: value_of(e) gives the unsigned quant of element e.
template <class Block, class ValueOf>
float dot_affine_k(const Block* x, const BlockQ8_K* y, int64_t nb, ValueOf value_of) {
    float sum = 0.0f;
    for (int64_t i = 0; i < nb; ++i) {
        int sumi = 0, summ = 0;
        for (int s = 0; s < 8; ++s) {
            uint8_t sc, m;
            kquant_scale_min(x[i].scales, s, &sc, &m);
            int q[32];
            for (int l = 0; l < 32; ++l) q[l] = value_of(x[i], 32 * s + l);
            sumi += sc * q8k_dot32(y[i].qs + 32 * s, q);
            summ += m * (y[i].bsums[2 * s] + y[i].bsums[2 * s + 1]);
        }
        const float d = fp16_to_fp32(x[i].d) * y[i].d;
        const float dmin = fp16_to_fp32(x[i].dmin) * y[i].d;
        sum += d * static_cast<float>(sumi) - dmin * static_cast<float>(summ);
    }
    return sum;
}

}  // namespace

void dequantize_q4_k(const BlockQ4_K* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQKK) {
        const float d = fp16_to_fp32(x[i].d), dmin = fp16_to_fp32(x[i].dmin);
        for (int s = 0; s < 8; ++s) {
            uint8_t sc, m;
            kquant_scale_min(x[i].scales, s, &sc, &m);
            const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
            for (int l = 0; l < 32; ++l) {
                y[32 * s + l] = d1 * static_cast<float>(k_nibble(x[i].qs, 32 * s + l)) - m1;
            }
        }
    }
}

void dequantize_q5_k(const BlockQ5_K* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQKK) {
        const float d = fp16_to_fp32(x[i].d), dmin = fp16_to_fp32(x[i].dmin);
        for (int s = 0; s < 8; ++s) {
            uint8_t sc, m;
            kquant_scale_min(x[i].scales, s, &sc, &m);
            const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
            for (int l = 0; l < 32; ++l) {
                y[32 * s + l] = d1 * static_cast<float>(q5k_value(x[i], 32 * s + l)) - m1;
            }
        }
    }
}

void dequantize_q6_k(const BlockQ6_K* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQKK) {
        const float d = fp16_to_fp32(x[i].d);
        for (int e = 0; e < kQKK; ++e) {
            const float ds = d * static_cast<float>(x[i].scales[e / 16]);
            y[e] = ds * static_cast<float>(q6k_value(x[i], e) - 32);
        }
    }
}

void dequantize_q8_k(const BlockQ8_K* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQKK) {
        for (int e = 0; e < kQKK; ++e) y[e] = x[i].d * static_cast<float>(x[i].qs[e]);
    }
}

// ggml's quantize_row_q8_K_ref: the largest-magnitude element maps to -127,
// round half to even, and per-16 sums for the K-quant min terms.
void quantize_q8_k(const float* x, BlockQ8_K* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += kQKK) {
        float amax = 0.0f, max = 0.0f;
        for (int e = 0; e < kQKK; ++e) {
            if (std::fabs(x[e]) > amax) {
                amax = std::fabs(x[e]);
                max = x[e];
            }
        }
        if (amax == 0.0f) {
            y[i] = BlockQ8_K{};
            continue;
        }
        const float iscale = -127.0f / max;
        for (int e = 0; e < kQKK; ++e) {
            const int v = quantized_value(iscale * x[e]);
            y[i].qs[e] = static_cast<int8_t>(std::min(127, v));
        }
        for (int g = 0; g < kQKK / 16; ++g) {
            int s = 0;
            for (int l = 0; l < 16; ++l) s += y[i].qs[16 * g + l];
            y[i].bsums[g] = static_cast<int16_t>(s);
        }
        y[i].d = 1.0f / iscale;
    }
}

float dot_q4_k_q8_k(const BlockQ4_K* x, const BlockQ8_K* y, int64_t nb) {
    return dot_affine_k(x, y, nb, [](const BlockQ4_K& b, int e) { return k_nibble(b.qs, e); });
}

float dot_q5_k_q8_k(const BlockQ5_K* x, const BlockQ8_K* y, int64_t nb) {
    return dot_affine_k(x, y, nb, q5k_value);
}

float dot_q6_k_q8_k(const BlockQ6_K* x, const BlockQ8_K* y, int64_t nb) {
    float sum = 0.0f;
    for (int64_t i = 0; i < nb; ++i) {
        int sumi = 0;
        for (int g = 0; g < kQKK / 16; ++g) {
            int s = 0;
            for (int l = 0; l < 16; ++l) s += (q6k_value(x[i], 16 * g + l) - 32) * y[i].qs[16 * g + l];
            sumi += x[i].scales[g] * s;
        }
        sum += (fp16_to_fp32(x[i].d) * y[i].d) * static_cast<float>(sumi);
    }
    return sum;
}

}  // namespace tessera::quant_detail
