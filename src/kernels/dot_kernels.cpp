// Run-time selection of dot kernels: CPUID feature checks and the fallback
// chain VNNI -> AVX2 -> scalar reference (tensor/quant.h's vec_dot); the AMX
// level runs the VNNI dot kernels (its tiles: kernels/amx_tiles.h).
#include "kernels/dot_kernels.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "core/check.h"
#include "kernels/cpu/dot_x86.h"
#include "tensor/quant.h"

namespace tessera {
namespace {

template <GgmlType kWeight>
void scalar_multi_dot(int64_t n, const void* w, const uint8_t* act, size_t stride, int n_act, float* out) {
    for (int t = 0; t < n_act; ++t) out[t] = vec_dot(kWeight, n, w, act + static_cast<size_t>(t) * stride);
}

MultiDotFn scalar_kernel(GgmlType weight) {
    switch (weight) {
        case GgmlType::F32: return scalar_multi_dot<GgmlType::F32>;
        case GgmlType::F16: return scalar_multi_dot<GgmlType::F16>;
        case GgmlType::BF16: return scalar_multi_dot<GgmlType::BF16>;
        case GgmlType::Q4_0: return scalar_multi_dot<GgmlType::Q4_0>;
        case GgmlType::Q4_1: return scalar_multi_dot<GgmlType::Q4_1>;
        case GgmlType::Q5_0: return scalar_multi_dot<GgmlType::Q5_0>;
        case GgmlType::Q5_1: return scalar_multi_dot<GgmlType::Q5_1>;
        case GgmlType::Q8_0: return scalar_multi_dot<GgmlType::Q8_0>;
        case GgmlType::Q2_K: return scalar_multi_dot<GgmlType::Q2_K>;
        case GgmlType::Q3_K: return scalar_multi_dot<GgmlType::Q3_K>;
        case GgmlType::Q4_K: return scalar_multi_dot<GgmlType::Q4_K>;
        case GgmlType::Q5_K: return scalar_multi_dot<GgmlType::Q5_K>;
        case GgmlType::Q6_K: return scalar_multi_dot<GgmlType::Q6_K>;
        case GgmlType::IQ4_NL: return scalar_multi_dot<GgmlType::IQ4_NL>;
        case GgmlType::IQ4_XS: return scalar_multi_dot<GgmlType::IQ4_XS>;
        case GgmlType::MXFP4: return scalar_multi_dot<GgmlType::MXFP4>;
        default: TS_CHECK_MSG(false, "find_multi_dot: unsupported weight type");
    }
    return nullptr;
}

SimdLevel cpu_simd_level() {
#if defined(__x86_64__)
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                      __builtin_cpu_supports("f16c");
    if (!avx2) return SimdLevel::Scalar;
    const bool vnni = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
    if (!vnni) return SimdLevel::Avx2;
    return x86::amx_int8_usable() ? SimdLevel::Avx512Amx : SimdLevel::Avx512Vnni;
#else
    return SimdLevel::Scalar;
#endif
}

// TESSERA_KERNELS caps the level; an unknown name is reported and ignored.
SimdLevel capped_level(SimdLevel cpu) {
    const char* cap = std::getenv("TESSERA_KERNELS");
    if (cap == nullptr || *cap == '\0') return cpu;
    if (const auto level = parse_simd_level(cap)) return std::min(cpu, *level);
    std::fprintf(stderr, "tessera: TESSERA_KERNELS=%s is not scalar, avx2, avx512vnni or avx512amx; ignored\n", cap);
    return cpu;
}

}  // namespace

SimdLevel best_simd_level() {
    // Once per process: the CPU does not change, and the AMX leave is asked for once.
    static const SimdLevel level = capped_level(cpu_simd_level());
    return level;
}

const char* simd_level_name(SimdLevel level) {
    switch (level) {
        case SimdLevel::Scalar: return "scalar";
        case SimdLevel::Avx2: return "avx2";
        case SimdLevel::Avx512Vnni: return "avx512vnni";
        case SimdLevel::Avx512Amx: return "avx512amx";
    }
    return "unknown";
}

std::optional<SimdLevel> parse_simd_level(std::string_view name) {
    for (int l = 0; l <= static_cast<int>(SimdLevel::Avx512Amx); ++l) {
        const auto level = static_cast<SimdLevel>(l);
        if (name == simd_level_name(level)) return level;
    }
    return std::nullopt;
}

MultiDotFn find_multi_dot(GgmlType weight, SimdLevel level) {
    TS_CHECK(static_cast<int>(level) <= static_cast<int>(best_simd_level()));
    MultiDotFn fn = nullptr;
    if (level >= SimdLevel::Avx512Vnni) fn = x86::avx512vnni_multi_dot(weight);
    if (fn == nullptr && level != SimdLevel::Scalar) fn = x86::avx2_multi_dot(weight);
    return fn != nullptr ? fn : scalar_kernel(weight);
}

RowsKernel find_rows_dot(GgmlType weight, SimdLevel level) {
    TS_CHECK(static_cast<int>(level) <= static_cast<int>(best_simd_level()));
    if (level >= SimdLevel::Avx512Vnni) return x86::avx512vnni_rows_dot(weight);
    if (level == SimdLevel::Avx2) return x86::avx2_rows_dot(weight);
    return {};
}

}  // namespace tessera
