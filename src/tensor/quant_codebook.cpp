// Scalar reference code for the codebook formats IQ4_NL, IQ4_XS and MXFP4,
// whose 4-bit values index a fixed table (kIq4Values, kMxfp4Values) instead
// of standing for themselves: dequantization (bit-exact with ggml /
// gguf-py), dot products with Q8_0 (IQ4_NL, MXFP4) or Q8_K (IQ4_XS)
// activations, and quantization from float.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "tensor/fp16.h"
#include "tensor/quant_impl.h"

// Match ggml's rounding after every operation (no fused multiply-add).
#pragma GCC optimize("fp-contract=off")

namespace tessera::quant_detail {
namespace {

// Table value of element j (0..31) of a 32-element group of nibbles.
int table_value(const int8_t (&table)[16], const uint8_t* qs, int j) {
    return table[j < 16 ? qs[j] & 0xF : qs[j - 16] >> 4];
}

int dot32(const int8_t (&table)[16], const uint8_t* qs, const int8_t* y) {
    int s = 0;
    for (int j = 0; j < 32; ++j) s += table_value(table, qs, j) * y[j];
    return s;
}

void pack_nibbles(const int* idx, uint8_t* qs) {
    for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>(idx[j] | (idx[j + 16] << 4));
}

// Index of the kIq4Values entry nearest v (the lower one on a tie; NaN -> 0).
int nearest_iq4(float v) {
    int best = 0;
    float best_err = INFINITY;
    for (int k = 0; k < 16; ++k) {
        const float err = std::fabs(v - static_cast<float>(kIq4Values[k]));
        if (err < best_err) {
            best_err = err;
            best = k;
        }
    }
    return best;
}

// The inverse scales tried per group: the largest-magnitude element mapped
// to grid value -127 + k for k in [-kTries, kTries].
constexpr int kTries = 7;

// The scale s minimising the weighted squared error of x ~ s * grid[idx]
// over 32 elements: for each trial inverse scale, round to the nearest grid
// values and take that rounding's least-squares scale; the best wins.
float fit_iq4(const float* x, const float* importance) {
    float extreme = 0.0f;
    for (int j = 0; j < 32; ++j) {
        if (std::fabs(x[j]) > std::fabs(extreme)) extreme = x[j];
    }
    if (!(std::fabs(extreme) > 0.0f) || !std::isfinite(extreme)) return 0.0f;
    float w[32];
    element_weights(x, 32, importance, w);
    float best_scale = extreme / static_cast<float>(kIq4Values[0]);
    double best_score = -1.0;
    for (int k = -kTries; k <= kTries; ++k) {
        const float iscale = static_cast<float>(kIq4Values[0] + k) / extreme;
        double sxv = 0, svv = 0;
        for (int j = 0; j < 32; ++j) {
            const double v = kIq4Values[nearest_iq4(iscale * x[j])];
            sxv += w[j] * x[j] * v;
            svv += w[j] * v * v;
        }
        // For the least-squares scale sxv/svv, the error falls as sxv^2/svv grows.
        if (svv > 0 && sxv * sxv / svv > best_score) {
            best_score = sxv * sxv / svv;
            best_scale = static_cast<float>(sxv / svv);
        }
    }
    return best_scale;
}

// 32 indices of x against the stored scale d (all 0's grid neighbour when d is 0).
void iq4_indices(const float* x, float d, int* idx) {
    for (int j = 0; j < 32; ++j) idx[j] = nearest_iq4(d != 0.0f ? x[j] / d : 0.0f);
}

}  // namespace

void dequantize_iq4_nl(const BlockIQ4_NL* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16_to_fp32(x[i].d);
        for (int j = 0; j < kQK; ++j) y[j] = d * static_cast<float>(table_value(kIq4Values, x[i].qs, j));
    }
}

void dequantize_iq4_xs(const BlockIQ4_XS* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQKK) {
        const float d = fp16_to_fp32(x[i].d);
        for (int s = 0; s < 8; ++s) {
            const float dl = d * static_cast<float>(iq4xs_scale(x[i], s) - 32);
            for (int j = 0; j < 32; ++j) {
                y[32 * s + j] = dl * static_cast<float>(table_value(kIq4Values, x[i].qs + 16 * s, j));
            }
        }
    }
}

void dequantize_mxfp4(const BlockMXFP4* x, float* y, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = e8m0_half(x[i].e);
        for (int j = 0; j < kQK; ++j) y[j] = d * static_cast<float>(table_value(kMxfp4Values, x[i].qs, j));
    }
}

float dot_iq4_nl_q8_0(const BlockIQ4_NL* x, const BlockQ8_0* y, int64_t nb) {
    float sum = 0.0f;
    for (int64_t i = 0; i < nb; ++i) {
        const int sumi = dot32(kIq4Values, x[i].qs, y[i].qs);
        sum += (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d)) * static_cast<float>(sumi);
    }
    return sum;
}

float dot_iq4_xs_q8_k(const BlockIQ4_XS* x, const BlockQ8_K* y, int64_t nb) {
    float sum = 0.0f;
    for (int64_t i = 0; i < nb; ++i) {
        int sumi = 0;
        for (int s = 0; s < 8; ++s) {
            sumi += (iq4xs_scale(x[i], s) - 32) * dot32(kIq4Values, x[i].qs + 16 * s, y[i].qs + 32 * s);
        }
        sum += (fp16_to_fp32(x[i].d) * y[i].d) * static_cast<float>(sumi);
    }
    return sum;
}

float dot_mxfp4_q8_0(const BlockMXFP4* x, const BlockQ8_0* y, int64_t nb) {
    float sum = 0.0f;
    for (int64_t i = 0; i < nb; ++i) {
        const int sumi = dot32(kMxfp4Values, x[i].qs, y[i].qs);
        sum += (e8m0_half(x[i].e) * fp16_to_fp32(y[i].d)) * static_cast<float>(sumi);
    }
    return sum;
}

void quantize_iq4_nl_ref(const float* x, BlockIQ4_NL* y, int64_t nb, const float* importance) {
    int idx[kQK];
    for (int64_t i = 0; i < nb; ++i, x += kQK, importance = importance_at(importance, kQK)) {
        y[i].d = fp32_to_fp16(fit_iq4(x, importance));
        iq4_indices(x, fp16_to_fp32(y[i].d), idx);
        pack_nibbles(idx, y[i].qs);
    }
}

// Per-32 scales from fit_iq4, themselves quantized to 6 bits (-32..31)
// against d: the largest-magnitude one maps to -32, as Q6_K's scales do.
void quantize_iq4_xs_ref(const float* x, BlockIQ4_XS* y, int64_t nb, const float* importance) {
    int idx[32];
    for (int64_t i = 0; i < nb; ++i, x += kQKK, importance = importance_at(importance, kQKK)) {
        float scales[8], extreme = 0.0f;
        for (int s = 0; s < 8; ++s) {
            scales[s] = fit_iq4(x + 32 * s, importance_at(importance, 32 * s));
            if (std::fabs(scales[s]) > std::fabs(extreme)) extreme = scales[s];
        }
        std::memset(&y[i], 0, sizeof y[i]);
        y[i].d = fp32_to_fp16(extreme / -32.0f);
        const float d = fp16_to_fp32(y[i].d);
        for (int s = 0; s < 8; ++s) {
            const int ls = d != 0.0f ? std::clamp(static_cast<int>(std::nearbyint(scales[s] / d)), -32, 31) : 0;
            y[i].scales_l[s / 2] |= static_cast<uint8_t>(((ls + 32) & 0xF) << (4 * (s % 2)));
            y[i].scales_h |= static_cast<uint16_t>(((ls + 32) >> 4) << (2 * s));
            iq4_indices(x + 32 * s, d * static_cast<float>(ls), idx);
            pack_nibbles(idx, y[i].qs + 16 * s);
        }
    }
}

// gguf-py's MXFP4 quantizer: the exponent puts the largest magnitude in
// [4, 8) of the doubled grid (whose top is 12), then each element takes its
// nearest grid value (the first on a tie, in table order).
void quantize_mxfp4_ref(const float* x, BlockMXFP4* y, int64_t nb) {
    int idx[kQK];
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        float amax = 0.0f;
        for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
        // Clamped to the byte: amax below 2^-125 (e 0) or infinite (e 254).
        const float e = amax > 0.0f ? std::floor(std::log2(amax)) - 2.0f + 127.0f : 0.0f;
        y[i].e = static_cast<uint8_t>(std::clamp(e, 0.0f, 254.0f));
        const float d = e8m0_half(y[i].e);
        for (int j = 0; j < kQK; ++j) {
            idx[j] = 0;
            float best_err = INFINITY;
            for (int k = 0; k < 16; ++k) {
                const float err = std::fabs(d * static_cast<float>(kMxfp4Values[k]) - x[j]);
                if (err < best_err) {
                    best_err = err;
                    idx[j] = k;
                }
            }
        }
        pack_nibbles(idx, y[i].qs);
    }
}

}  // namespace tessera::quant_detail
