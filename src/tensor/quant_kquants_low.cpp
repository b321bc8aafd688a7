// Scalar reference code for the low-bit K-quants Q2_K and Q3_K (2 and 3 bits
// per weight, a scale per 16 elements): dequantization, bit-exact with ggml /
// gguf-py, and dot products with Q8_K activations. Their quantizers are in
// quant_kquants_search.cpp.
#include "tensor/fp16.h"
#include "tensor/quant_impl.h"

// Match ggml's rounding after every operation (no fused multiply-add).
#pragma GCC optimize("fp-contract=off")

namespace tessera::quant_detail {
namespace {

// The 2-bit part (0..3) of element e (0..255): the 128-element halves each
// use 32 bytes, element 128h + 32j + l at bits 2j of byte 32h + l.
int two_bits(const uint8_t* qs, int e) {
    const int half = e / 128, within = e % 128;
    return (qs[32 * half + within % 32] >> (2 * (within / 32))) & 3;
}

// Q3_K's signed value (-4..3) of element e: a clear hmask bit subtracts 4.
int q3k_value(const BlockQ3_K& b, int e) {
    const int high = (b.hmask[e % 32] >> (e / 32)) & 1;
    return two_bits(b.qs, e) - (high ? 0 : 4);
}

}  // namespace

void dequantize_q2_k(const BlockQ2_K* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQKK) {
        const float d = fp16_to_fp32(x[i].d), dmin = fp16_to_fp32(x[i].dmin);
        for (int g = 0; g < kQKK / 16; ++g) {
            const float dl = d * static_cast<float>(x[i].scales[g] & 0xF);
            const float ml = dmin * static_cast<float>(x[i].scales[g] >> 4);
            for (int l = 0; l < 16; ++l) y[16 * g + l] = dl * static_cast<float>(two_bits(x[i].qs, 16 * g + l)) - ml;
        }
    }
}

void dequantize_q3_k(const BlockQ3_K* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQKK) {
        const float d = fp16_to_fp32(x[i].d);
        for (int g = 0; g < kQKK / 16; ++g) {
            const float dl = d * static_cast<float>(q3k_scale(x[i].scales, g) - 32);
            for (int l = 0; l < 16; ++l) y[16 * g + l] = dl * static_cast<float>(q3k_value(x[i], 16 * g + l));
        }
    }
}

// sum_g sc_g * dot_g and sum_g m_g * bsums_g as integers, then
// d * d_y * sumi - dmin * d_y * summ in float, block by block.
float dot_q2_k_q8_k(const BlockQ2_K* x, const BlockQ8_K* y, int64_t nb) {
    float sum = 0.0f;
    for (int64_t i = 0; i < nb; ++i) {
        int sumi = 0, summ = 0;
        for (int g = 0; g < kQKK / 16; ++g) {
            int s = 0;
            for (int l = 0; l < 16; ++l) s += two_bits(x[i].qs, 16 * g + l) * y[i].qs[16 * g + l];
            sumi += (x[i].scales[g] & 0xF) * s;
            summ += (x[i].scales[g] >> 4) * y[i].bsums[g];
        }
        const float d = fp16_to_fp32(x[i].d) * y[i].d;
        const float dmin = fp16_to_fp32(x[i].dmin) * y[i].d;
        sum += d * static_cast<float>(sumi) - dmin * static_cast<float>(summ);
    }
    return sum;
}

float dot_q3_k_q8_k(const BlockQ3_K* x, const BlockQ8_K* y, int64_t nb) {
    float sum = 0.0f;
    for (int64_t i = 0; i < nb; ++i) {
        int sumi = 0;
        for (int g = 0; g < kQKK / 16; ++g) {
            int s = 0;
            for (int l = 0; l < 16; ++l) s += q3k_value(x[i], 16 * g + l) * y[i].qs[16 * g + l];
            sumi += (q3k_scale(x[i].scales, g) - 32) * s;
        }
        sum += (fp16_to_fp32(x[i].d) * y[i].d) * static_cast<float>(sumi);
    }
    return sum;
}

}  // namespace tessera::quant_detail
