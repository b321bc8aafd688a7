// Weight quantization into the K-quant formats (Q2_K, Q3_K, Q4_K, Q5_K,
// Q6_K). Unlike the legacy formats, where one scale per block follows from
// the block's extreme, a K-quant stores a scale (and, for Q2_K/Q4_K/Q5_K, a
// minimum) per 16- or 32-element sub-block, themselves quantized against a
// per-256 super-scale.
// The per-sub-block parameters are found by the weighted searches of
// quant_fit.cpp. Weights favour large elements, which matter most to a dot
// product, and the columns an importance matrix marks as busy.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "tensor/fp16.h"
#include "tensor/quant_impl.h"

namespace tessera::quant_detail {
namespace {

// 8 six-bit scales and mins into the 12 bytes kquant_scale_min reads.
void pack_scales_mins(const int* sc, const int* m, uint8_t* s) {
    std::memset(s, 0, 12);
    for (int j = 0; j < 4; ++j) {
        s[j] = static_cast<uint8_t>(sc[j]);
        s[j + 4] = static_cast<uint8_t>(m[j]);
    }
    for (int j = 4; j < 8; ++j) {
        s[j + 4] = static_cast<uint8_t>((sc[j] & 0xF) | ((m[j] & 0xF) << 4));
        s[j - 4] |= static_cast<uint8_t>((sc[j] >> 4) << 6);
        s[j] |= static_cast<uint8_t>((m[j] >> 4) << 6);
    }
}

// Low 2 bits of 256 values in Q2_K's / Q3_K's qs layout: element
// 128h + 32j + l at bits 2j of byte 32h + l.
void pack_two_bits(const int* q, uint8_t* qs) {
    std::memset(qs, 0, kQKK / 4);
    for (int e = 0; e < kQKK; ++e) {
        const int half = e / 128, within = e % 128;
        qs[32 * half + within % 32] |= static_cast<uint8_t>((q[e] & 3) << (2 * (within / 32)));
    }
}

// An affine K-quant super-block (Q2_K, Q4_K, Q5_K): per-group fits, their
// scales and mins quantized to [0, smax] against d and dmin, then every
// element quantized against the stored (rounded) parameters. ls and lm
// receive kQKK / group values, q 256 values in [0, nmax].
void quantize_affine_superblock(const float* x, const float* importance, int group, int nmax, int smax,
                                uint16_t* d_out, uint16_t* dmin_out, int* ls, int* lm, int* q) {
    const int groups = kQKK / group;
    AffineFit fits[kQKK / 16];
    float w[32];
    float max_scale = 0.0f, max_min = 0.0f;
    for (int s = 0; s < groups; ++s) {
        element_weights(x + group * s, group, importance_at(importance, group * s), w);
        fits[s] = fit_affine(x + group * s, w, group, nmax);
        max_scale = std::max(max_scale, fits[s].scale);
        max_min = std::max(max_min, fits[s].min);
    }
    const float fmax = static_cast<float>(smax);
    const float iscale = max_scale > 0 ? fmax / max_scale : 0.0f;
    const float imin = max_min > 0 ? fmax / max_min : 0.0f;
    for (int s = 0; s < groups; ++s) {
        ls[s] = round_clamp(iscale * fits[s].scale, 0, smax);
        lm[s] = round_clamp(imin * fits[s].min, 0, smax);
    }
    *d_out = fp32_to_fp16(max_scale / fmax);
    *dmin_out = fp32_to_fp16(max_min / fmax);
    const float d = fp16_to_fp32(*d_out), dmin = fp16_to_fp32(*dmin_out);
    for (int s = 0; s < groups; ++s) {
        const float dl = d * static_cast<float>(ls[s]), ml = dmin * static_cast<float>(lm[s]);
        for (int l = 0; l < group; ++l) {
            q[group * s + l] = dl > 0 ? round_clamp((x[group * s + l] + ml) / dl, 0, nmax) : 0;
        }
    }
}

}  // namespace

void quantize_q2_k_ref(const float* x, BlockQ2_K* y, int64_t nb, const float* importance) {
    int q[kQKK], ls[16], lm[16];
    for (int64_t i = 0; i < nb; ++i, x += kQKK, importance = importance_at(importance, kQKK)) {
        quantize_affine_superblock(x, importance, 16, 3, 15, &y[i].d, &y[i].dmin, ls, lm, q);
        for (int g = 0; g < 16; ++g) y[i].scales[g] = static_cast<uint8_t>(ls[g] | (lm[g] << 4));
        pack_two_bits(q, y[i].qs);
    }
}

// Per-16 symmetric fits with values in [-4, 3]; the largest-magnitude scale
// maps to -32 of the 6-bit scales, as Q6_K's map to -128.
void quantize_q3_k_ref(const float* x, BlockQ3_K* y, int64_t nb, const float* importance) {
    float w[16], group_scale[16];
    int q[kQKK];
    for (int64_t i = 0; i < nb; ++i, x += kQKK, importance = importance_at(importance, kQKK)) {
        float extreme = 0.0f;
        for (int g = 0; g < 16; ++g) {
            element_weights(x + 16 * g, 16, importance_at(importance, 16 * g), w);
            group_scale[g] = fit_symmetric(x + 16 * g, w, 16, 4);
            if (std::fabs(group_scale[g]) > std::fabs(extreme)) extreme = group_scale[g];
        }
        std::memset(&y[i], 0, sizeof y[i]);
        const float iscale = extreme != 0.0f ? -32.0f / extreme : 0.0f;
        y[i].d = fp32_to_fp16(extreme != 0.0f ? 1.0f / iscale : 0.0f);
        const float d = fp16_to_fp32(y[i].d);
        for (int g = 0; g < 16; ++g) {
            const int ls = round_clamp(iscale * group_scale[g], -32, 31);
            const int stored = ls + 32;
            y[i].scales[g % 8] |= static_cast<uint8_t>((stored & 0xF) << (4 * (g / 8)));
            y[i].scales[8 + g % 4] |= static_cast<uint8_t>((stored >> 4) << (2 * (g / 4)));
            const float dl = d * static_cast<float>(ls);
            for (int l = 0; l < 16; ++l) {
                const int e = 16 * g + l;
                q[e] = (dl != 0.0f ? round_clamp(x[e] / dl, -4, 3) : 0) + 4;  // 0..7
                y[i].hmask[e % 32] |= static_cast<uint8_t>((q[e] >> 2) << (e / 32));
            }
        }
        pack_two_bits(q, y[i].qs);
    }
}

void quantize_q4_k_ref(const float* x, BlockQ4_K* y, int64_t nb, const float* importance) {
    int q[kQKK], ls[8], lm[8];
    for (int64_t i = 0; i < nb; ++i, x += kQKK, importance = importance_at(importance, kQKK)) {
        quantize_affine_superblock(x, importance, 32, 15, 63, &y[i].d, &y[i].dmin, ls, lm, q);
        pack_scales_mins(ls, lm, y[i].scales);
        for (int c = 0; c < 4; ++c) {
            for (int l = 0; l < 32; ++l) {
                y[i].qs[32 * c + l] = static_cast<uint8_t>(q[64 * c + l] | (q[64 * c + 32 + l] << 4));
            }
        }
    }
}

void quantize_q5_k_ref(const float* x, BlockQ5_K* y, int64_t nb, const float* importance) {
    int q[kQKK], ls[8], lm[8];
    for (int64_t i = 0; i < nb; ++i, x += kQKK, importance = importance_at(importance, kQKK)) {
        quantize_affine_superblock(x, importance, 32, 31, 63, &y[i].d, &y[i].dmin, ls, lm, q);
        pack_scales_mins(ls, lm, y[i].scales);
        std::memset(y[i].qh, 0, sizeof y[i].qh);
        for (int c = 0; c < 4; ++c) {
            for (int l = 0; l < 32; ++l) {
                const int lo = q[64 * c + l], hi = q[64 * c + 32 + l];
                y[i].qs[32 * c + l] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
            }
        }
        for (int e = 0; e < kQKK; ++e) {
            y[i].qh[e % 32] |= static_cast<uint8_t>((q[e] >> 4) << (e / 32));
        }
    }
}

void quantize_q6_k_ref(const float* x, BlockQ6_K* y, int64_t nb, const float* importance) {
    float w[16];
    float group_scale[kQKK / 16];
    for (int64_t i = 0; i < nb; ++i, x += kQKK, importance = importance_at(importance, kQKK)) {
        float extreme = 0.0f;
        for (int g = 0; g < kQKK / 16; ++g) {
            for (int l = 0; l < 16; ++l) {
                w[l] = x[16 * g + l] * x[16 * g + l] * (importance ? importance[16 * g + l] : 1.0f);
            }
            group_scale[g] = fit_symmetric(x + 16 * g, w, 16, 32);
            if (std::fabs(group_scale[g]) > std::fabs(extreme)) extreme = group_scale[g];
        }
        std::memset(&y[i], 0, sizeof y[i]);
        if (extreme == 0.0f) continue;  // all zeros (and d = 0)
        // The largest scale maps to -128, as for the elements.
        const float iscale = -128.0f / extreme;
        for (int g = 0; g < kQKK / 16; ++g) {
            y[i].scales[g] = static_cast<int8_t>(round_clamp(iscale * group_scale[g], -128, 127));
        }
        y[i].d = fp32_to_fp16(1.0f / iscale);
        const float d = fp16_to_fp32(y[i].d);
        for (int e = 0; e < kQKK; ++e) {
            const float ds = d * static_cast<float>(y[i].scales[e / 16]);
            const int v = (ds != 0.0f ? round_clamp(x[e] / ds, -32, 31) : 0) + 32;
            const int half = e / 128, within = e % 128;
            y[i].ql[64 * half + within % 64] |= static_cast<uint8_t>((v & 0xF) << (4 * (within / 64)));
            y[i].qh[32 * half + within % 32] |= static_cast<uint8_t>((v >> 4) << (2 * (within / 32)));
        }
    }
}

}  // namespace tessera::quant_detail
