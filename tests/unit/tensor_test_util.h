// Shared helpers for the tensor/ and kernels/ tests: seeded random rows in any
// supported weight format and a magnitude bound for float-error tolerances.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gguf/ggml_type.h"
#include "tensor/fp16.h"
#include "tensor/quant.h"

namespace tessera::test {

inline std::vector<float> random_floats(std::mt19937& rng, int64_t n, float scale = 1.0f) {
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> x(static_cast<size_t>(n));
    for (auto& v : x) v = dist(rng);
    return x;
}

// Formats whose test rows are random block bytes (every bit pattern of the
// values and sub-block scales) rather than quantized Gaussian data.
inline bool random_bytes_rows(GgmlType t) {
    switch (t) {
        case GgmlType::Q2_K: case GgmlType::Q3_K: case GgmlType::Q4_K: case GgmlType::Q5_K: case GgmlType::Q6_K:
        case GgmlType::IQ4_NL: case GgmlType::IQ4_XS:
            return true;
        default:
            return false;
    }
}

// Byte offsets of the fp16 scale fields inside one such block.
inline std::vector<size_t> block_f16_fields(GgmlType t) {
    switch (t) {
        case GgmlType::Q6_K: return {208};
        case GgmlType::Q2_K: return {80, 82};
        case GgmlType::Q3_K: return {108};
        case GgmlType::IQ4_NL: case GgmlType::IQ4_XS: return {0};
        default: return {0, 2};
    }
}

// A row of n elements in weight format t: quantized from Gaussian data where
// tessera has a quantizer, random bytes with small finite scales otherwise.
inline std::vector<uint8_t> random_weight_row(std::mt19937& rng, GgmlType t, int64_t n) {
    const size_t bytes = *ggml_row_bytes(t, n);
    std::vector<uint8_t> row(bytes);
    if (!random_bytes_rows(t)) {
        const auto x = random_floats(rng, n);
        quantize_row_weights(t, x.data(), row.data(), n);
        return row;
    }
    std::uniform_int_distribution<int> byte(0, 255);
    for (auto& b : row) b = static_cast<uint8_t>(byte(rng));
    std::uniform_real_distribution<float> scale(1e-3f, 0.05f);
    const size_t block_bytes = ggml_type_info(static_cast<uint32_t>(t))->block_bytes;
    for (size_t off = 0; off < bytes; off += block_bytes) {
        for (size_t field : block_f16_fields(t)) {
            const uint16_t h = fp32_to_fp16(scale(rng));
            std::memcpy(row.data() + off + field, &h, sizeof h);
        }
    }
    return row;
}

// A bound on the size of the terms a dot product of w and a sums (each term
// is at most (|w_i| + max|w|) * |a_i| for every format's decomposition), used
// to scale float round-off tolerances.
inline double dot_magnitude(const std::vector<float>& w, const std::vector<float>& a) {
    double wmax = 0.0, mag = 0.0;
    for (float v : w) wmax = std::max(wmax, static_cast<double>(std::fabs(v)));
    for (size_t i = 0; i < w.size(); ++i) mag += (std::fabs(w[i]) + wmax) * std::fabs(a[i]);
    return mag;
}

}  // namespace tessera::test
