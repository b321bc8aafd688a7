// The type switch behind quant.h, plus the plain float formats (F32, F16,
// BF16). Per-format block code lives in quant_legacy.cpp and quant_kquants.cpp.
#include "tensor/quant.h"

#include <cstring>

#include "core/check.h"
#include "tensor/fp16.h"
#include "tensor/quant_impl.h"

namespace tessera {
namespace {

using namespace quant_detail;

template <class Block>
const Block* as_blocks(const void* p) {
    return static_cast<const Block*>(p);
}
template <class Block>
Block* as_blocks(void* p) {
    return static_cast<Block*>(p);
}

double dot_f32(const float* a, const float* b, int64_t n) {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
    return s;
}

template <float (*ToF32)(uint16_t)>
double dot_half(const uint16_t* a, const uint16_t* b, int64_t n) {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) s += static_cast<double>(ToF32(a[i])) * ToF32(b[i]);
    return s;
}

void quantize_float(GgmlType t, const float* x, void* dst, int64_t n) {
    if (t == GgmlType::F32) {
        std::memcpy(dst, x, static_cast<size_t>(n) * sizeof(float));
        return;
    }
    auto* out = static_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < n; ++i) out[i] = t == GgmlType::F16 ? fp32_to_fp16(x[i]) : fp32_to_bf16(x[i]);
}

}  // namespace

bool is_supported_weight_type(GgmlType t) {
    switch (t) {
        case GgmlType::F32: case GgmlType::F16: case GgmlType::BF16:
        case GgmlType::Q4_0: case GgmlType::Q4_1: case GgmlType::Q5_0: case GgmlType::Q5_1:
        case GgmlType::Q8_0: case GgmlType::Q2_K: case GgmlType::Q3_K: case GgmlType::Q4_K:
        case GgmlType::Q5_K: case GgmlType::Q6_K: case GgmlType::IQ4_NL: case GgmlType::IQ4_XS:
        case GgmlType::MXFP4:
            return true;
        default:
            return false;
    }
}

int64_t block_elems(GgmlType t) {
    const auto info = ggml_type_info(static_cast<uint32_t>(t));
    TS_CHECK(info.has_value());
    return info->block_size;
}

void dequantize_row(GgmlType t, const void* src, float* dst, int64_t n) {
    const int64_t nb = n / block_elems(t);
    TS_CHECK(nb * block_elems(t) == n);
    switch (t) {
        case GgmlType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
        case GgmlType::F16:
            for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(as_blocks<uint16_t>(src)[i]);
            return;
        case GgmlType::BF16:
            for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(as_blocks<uint16_t>(src)[i]);
            return;
        case GgmlType::Q4_0: dequantize_q4_0(as_blocks<BlockQ4_0>(src), dst, nb); return;
        case GgmlType::Q4_1: dequantize_q4_1(as_blocks<BlockQ4_1>(src), dst, nb); return;
        case GgmlType::Q5_0: dequantize_q5_0(as_blocks<BlockQ5_0>(src), dst, nb); return;
        case GgmlType::Q5_1: dequantize_q5_1(as_blocks<BlockQ5_1>(src), dst, nb); return;
        case GgmlType::Q8_0: dequantize_q8_0(as_blocks<BlockQ8_0>(src), dst, nb); return;
        case GgmlType::Q8_1: dequantize_q8_1(as_blocks<BlockQ8_1>(src), dst, nb); return;
        case GgmlType::Q2_K: dequantize_q2_k(as_blocks<BlockQ2_K>(src), dst, nb); return;
        case GgmlType::Q3_K: dequantize_q3_k(as_blocks<BlockQ3_K>(src), dst, nb); return;
        case GgmlType::Q4_K: dequantize_q4_k(as_blocks<BlockQ4_K>(src), dst, nb); return;
        case GgmlType::Q5_K: dequantize_q5_k(as_blocks<BlockQ5_K>(src), dst, nb); return;
        case GgmlType::Q6_K: dequantize_q6_k(as_blocks<BlockQ6_K>(src), dst, nb); return;
        case GgmlType::Q8_K: dequantize_q8_k(as_blocks<BlockQ8_K>(src), dst, nb); return;
        case GgmlType::IQ4_NL: dequantize_iq4_nl(as_blocks<BlockIQ4_NL>(src), dst, nb); return;
        case GgmlType::IQ4_XS: dequantize_iq4_xs(as_blocks<BlockIQ4_XS>(src), dst, nb); return;
        case GgmlType::MXFP4: dequantize_mxfp4(as_blocks<BlockMXFP4>(src), dst, nb); return;
        default: TS_CHECK_MSG(false, "dequantize_row: unsupported type");
    }
}

GgmlType activation_type_for(GgmlType weight) {
    switch (weight) {
        case GgmlType::Q4_0: case GgmlType::Q5_0: case GgmlType::Q8_0: case GgmlType::IQ4_NL: case GgmlType::MXFP4:
            return GgmlType::Q8_0;
        case GgmlType::Q4_1: case GgmlType::Q5_1: return GgmlType::Q8_1;
        case GgmlType::Q2_K: case GgmlType::Q3_K: case GgmlType::Q4_K: case GgmlType::Q5_K: case GgmlType::Q6_K:
        case GgmlType::IQ4_XS:
            return GgmlType::Q8_K;
        case GgmlType::F32: case GgmlType::F16: case GgmlType::BF16: return weight;
        default: TS_CHECK_MSG(false, "activation_type_for: unsupported weight type");
    }
    return GgmlType::F32;
}

void quantize_row(GgmlType act_type, const float* x, void* dst, int64_t n) {
    const int64_t nb = n / block_elems(act_type);
    TS_CHECK(nb * block_elems(act_type) == n);
    switch (act_type) {
        case GgmlType::F32: case GgmlType::F16: case GgmlType::BF16:
            quantize_float(act_type, x, dst, n);
            return;
        case GgmlType::Q8_0: quantize_q8_0_act(x, as_blocks<BlockQ8_0>(dst), nb); return;
        case GgmlType::Q8_1: quantize_q8_1_act(x, as_blocks<BlockQ8_1>(dst), nb); return;
        case GgmlType::Q8_K: quantize_q8_k(x, as_blocks<BlockQ8_K>(dst), nb); return;
        default: TS_CHECK_MSG(false, "quantize_row: not an activation type");
    }
}

void quantize_row_weights(GgmlType t, const float* x, void* dst, int64_t n, const float* importance) {
    const int64_t nb = n / block_elems(t);
    TS_CHECK(nb * block_elems(t) == n);
    switch (t) {
        case GgmlType::F32: case GgmlType::F16: case GgmlType::BF16: quantize_float(t, x, dst, n); return;
        case GgmlType::Q4_0:
            if (importance != nullptr) {
                quantize_q4_0_weighted(x, as_blocks<BlockQ4_0>(dst), nb, importance);
            } else {
                quantize_q4_0_ref(x, as_blocks<BlockQ4_0>(dst), nb);
            }
            return;
        case GgmlType::Q4_1:
            if (importance != nullptr) {
                quantize_q4_1_weighted(x, as_blocks<BlockQ4_1>(dst), nb, importance);
            } else {
                quantize_q4_1_ref(x, as_blocks<BlockQ4_1>(dst), nb);
            }
            return;
        case GgmlType::Q5_0:
            if (importance != nullptr) {
                quantize_q5_0_weighted(x, as_blocks<BlockQ5_0>(dst), nb, importance);
            } else {
                quantize_q5_0_ref(x, as_blocks<BlockQ5_0>(dst), nb);
            }
            return;
        case GgmlType::Q5_1:
            if (importance != nullptr) {
                quantize_q5_1_weighted(x, as_blocks<BlockQ5_1>(dst), nb, importance);
            } else {
                quantize_q5_1_ref(x, as_blocks<BlockQ5_1>(dst), nb);
            }
            return;
        case GgmlType::Q8_0: quantize_q8_0_ref(x, as_blocks<BlockQ8_0>(dst), nb); return;
        case GgmlType::Q2_K: quantize_q2_k_ref(x, as_blocks<BlockQ2_K>(dst), nb, importance); return;
        case GgmlType::Q3_K: quantize_q3_k_ref(x, as_blocks<BlockQ3_K>(dst), nb, importance); return;
        case GgmlType::Q4_K: quantize_q4_k_ref(x, as_blocks<BlockQ4_K>(dst), nb, importance); return;
        case GgmlType::Q5_K: quantize_q5_k_ref(x, as_blocks<BlockQ5_K>(dst), nb, importance); return;
        case GgmlType::Q6_K: quantize_q6_k_ref(x, as_blocks<BlockQ6_K>(dst), nb, importance); return;
        case GgmlType::IQ4_NL: quantize_iq4_nl_ref(x, as_blocks<BlockIQ4_NL>(dst), nb, importance); return;
        case GgmlType::IQ4_XS: quantize_iq4_xs_ref(x, as_blocks<BlockIQ4_XS>(dst), nb, importance); return;
        case GgmlType::MXFP4: quantize_mxfp4_ref(x, as_blocks<BlockMXFP4>(dst), nb); return;
        default: TS_CHECK_MSG(false, "quantize_row_weights: not a supported weight type");
    }
}

bool uses_importance(GgmlType t) {
    switch (t) {
        case GgmlType::Q4_0: case GgmlType::Q4_1: case GgmlType::Q5_0: case GgmlType::Q5_1:
        case GgmlType::Q2_K: case GgmlType::Q3_K: case GgmlType::Q4_K: case GgmlType::Q5_K: case GgmlType::Q6_K:
        case GgmlType::IQ4_NL: case GgmlType::IQ4_XS: return true;
        default: return false;
    }
}

float vec_dot(GgmlType weight, int64_t n, const void* w, const void* a) {
    const int64_t nb = n / block_elems(weight);
    TS_CHECK(nb * block_elems(weight) == n);
    switch (weight) {
        case GgmlType::F32: return static_cast<float>(dot_f32(as_blocks<float>(w), as_blocks<float>(a), n));
        case GgmlType::F16:
            return static_cast<float>(dot_half<fp16_to_fp32>(as_blocks<uint16_t>(w), as_blocks<uint16_t>(a), n));
        case GgmlType::BF16:
            return static_cast<float>(dot_half<bf16_to_fp32>(as_blocks<uint16_t>(w), as_blocks<uint16_t>(a), n));
        case GgmlType::Q4_0: return dot_q4_0_q8_0(as_blocks<BlockQ4_0>(w), as_blocks<BlockQ8_0>(a), nb);
        case GgmlType::Q4_1: return dot_q4_1_q8_1(as_blocks<BlockQ4_1>(w), as_blocks<BlockQ8_1>(a), nb);
        case GgmlType::Q5_0: return dot_q5_0_q8_0(as_blocks<BlockQ5_0>(w), as_blocks<BlockQ8_0>(a), nb);
        case GgmlType::Q5_1: return dot_q5_1_q8_1(as_blocks<BlockQ5_1>(w), as_blocks<BlockQ8_1>(a), nb);
        case GgmlType::Q8_0: return dot_q8_0_q8_0(as_blocks<BlockQ8_0>(w), as_blocks<BlockQ8_0>(a), nb);
        case GgmlType::Q2_K: return dot_q2_k_q8_k(as_blocks<BlockQ2_K>(w), as_blocks<BlockQ8_K>(a), nb);
        case GgmlType::Q3_K: return dot_q3_k_q8_k(as_blocks<BlockQ3_K>(w), as_blocks<BlockQ8_K>(a), nb);
        case GgmlType::Q4_K: return dot_q4_k_q8_k(as_blocks<BlockQ4_K>(w), as_blocks<BlockQ8_K>(a), nb);
        case GgmlType::Q5_K: return dot_q5_k_q8_k(as_blocks<BlockQ5_K>(w), as_blocks<BlockQ8_K>(a), nb);
        case GgmlType::Q6_K: return dot_q6_k_q8_k(as_blocks<BlockQ6_K>(w), as_blocks<BlockQ8_K>(a), nb);
        case GgmlType::IQ4_NL: return dot_iq4_nl_q8_0(as_blocks<BlockIQ4_NL>(w), as_blocks<BlockQ8_0>(a), nb);
        case GgmlType::IQ4_XS: return dot_iq4_xs_q8_k(as_blocks<BlockIQ4_XS>(w), as_blocks<BlockQ8_K>(a), nb);
        case GgmlType::MXFP4: return dot_mxfp4_q8_0(as_blocks<BlockMXFP4>(w), as_blocks<BlockQ8_0>(a), nb);
        default: TS_CHECK_MSG(false, "vec_dot: unsupported weight type");
    }
    return 0.0f;
}

}  // namespace tessera
