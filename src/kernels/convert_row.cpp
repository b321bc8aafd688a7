// Picks a row converter: F16/BF16 from the row kernel table, Q8_0/Q8_1/Q8_K from
// the AVX2 activation quantizer, the scalar quantize_row otherwise.
#include "kernels/convert_row.h"

#include <cstring>

#include "core/check.h"
#include "kernels/cpu/act_quantize_x86.h"
#include "kernels/row_kernels.h"
#include "tensor/quant.h"

namespace tessera {
namespace {

template <GgmlType T>
void reference(const float* x, void* dst, int64_t n) {
    quantize_row(T, x, dst, n);
}

template <GgmlType T>
void avx2_act(const float* x, void* dst, int64_t n) {
    x86::avx2_quantize_act(T, x, static_cast<uint8_t*>(dst), n);
}

void copy_f32(const float* x, void* dst, int64_t n) { std::memcpy(dst, x, static_cast<size_t>(n) * sizeof(float)); }

template <GgmlType T>
void widen_reference(const void* src, float* dst, int64_t n) {
    dequantize_row(T, src, dst, n);
}

}  // namespace

ConvertRowFn find_convert_row(GgmlType t, SimdLevel level) {
    const RowKernels* rk = find_row_kernels(level);
    switch (t) {
        case GgmlType::F32: return copy_f32;
        case GgmlType::F16: return rk != nullptr ? rk->to_f16 : reference<GgmlType::F16>;
        case GgmlType::BF16: return rk != nullptr ? rk->to_bf16 : reference<GgmlType::BF16>;
        case GgmlType::Q8_0: return rk != nullptr ? avx2_act<GgmlType::Q8_0> : reference<GgmlType::Q8_0>;
        case GgmlType::Q8_1: return rk != nullptr ? avx2_act<GgmlType::Q8_1> : reference<GgmlType::Q8_1>;
        case GgmlType::Q8_K: return rk != nullptr ? avx2_act<GgmlType::Q8_K> : reference<GgmlType::Q8_K>;
        default: TS_CHECK_MSG(false, "find_convert_row: not a row conversion target");
    }
    return nullptr;
}

WidenRowFn find_widen_row(GgmlType t, SimdLevel level) {
    const RowKernels* rk = find_row_kernels(level);
    switch (t) {
        case GgmlType::F16: return rk != nullptr ? rk->from_f16 : widen_reference<GgmlType::F16>;
        case GgmlType::BF16: return rk != nullptr ? rk->from_bf16 : widen_reference<GgmlType::BF16>;
        default: TS_CHECK_MSG(false, "find_widen_row: not a half-precision type");
    }
    return nullptr;
}

}  // namespace tessera
