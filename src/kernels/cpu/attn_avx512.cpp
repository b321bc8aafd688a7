// AVX-512 attention range kernel: the shared body over 16-float vectors.
// Only called when the CPU reports avx512f (the VNNI dispatch level).
#include "kernels/cpu/attn_x86.h"

#if defined(__x86_64__)
// Every header comes before the target pragma, so inline functions they define
// are compiled for the baseline ISA in this file as in every other.
#include "kernels/cpu/x86_body_context.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f")
// GCC 12 reports false -Wmaybe-uninitialized inside avx512fintrin.h's
// masked builtins (GCC bug 105593), and a definite -Wuninitialized once
// _mm512_cvtph_ps is inlined into the tiled loops.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace tessera::x86 {
namespace attn_avx512_impl {

#include "kernels/cpu/vec_exp_body.h"
#include "kernels/cpu/simd_ops_avx512_body.h"

// Row loaders: 16 elements from element c of a stored row, as floats (V rows;
// F32/F16/BF16 K blocks read through them too, keys in lanes).
struct LoadF32 {
    static __m512 load(const uint8_t* row, int c) { return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + c); }
};
struct LoadF16 {
    static __m512 load(const uint8_t* row, int c) {
        return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * c)));
    }
};
struct LoadBF16 {  // bf16 is the top half of an f32
    static __m512 load(const uint8_t* row, int c) {
        const __m512i h = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * c)));
        return _mm512_castsi512_ps(_mm512_slli_epi32(h, 16));
    }
};
// Q8_0 blocks: fp16 scale d then 32 int8 q, value d * q (one rounding, as the
// scalar dequantizer). 16 divides 32, so a load stays inside one block. The
// scale goes through vcvtph2ps on a fresh register (_cvtsh_ss would carry a
// false dependency).
struct LoadQ8_0 {
    static __m512 load(const uint8_t* row, int c) {
        const uint8_t* b = row + (c / 32) * 34;
        uint16_t d;
        std::memcpy(&d, b, sizeof d);
        const __m128i q8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2 + c % 32));
        return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q8)), _mm512_broadcastss_ps(_mm_cvtph_ps(_mm_cvtsi32_si128(d))));
    }
};

// 16 int8 from element c, as floats (Q8_0 K values, keys in lanes).
struct LoadI8 {
    static __m512 load(const uint8_t* p, int c) {
        return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + c))));
    }
};

#include "kernels/cpu/attn_x86_body.h"

}  // namespace attn_avx512_impl

AttendRangeFn avx512_attend_range(int head_dim, GgmlType k_type, GgmlType v_type) {
    if (head_dim % attn_avx512_impl::Ops::W != 0) return nullptr;
    // The F16 and Q8_0 loaders use F16C conversions.
    const bool f16c = __builtin_cpu_supports("f16c");
    for (GgmlType t : {k_type, v_type}) {
        if ((t == GgmlType::F16 || t == GgmlType::Q8_0) && !f16c) return nullptr;
    }
    return attn_avx512_impl::kernel_for(k_type, v_type);
}

}  // namespace tessera::x86
#pragma GCC diagnostic pop
#pragma GCC pop_options
#else
namespace tessera::x86 {
AttendRangeFn avx512_attend_range(int, GgmlType, GgmlType) { return nullptr; }
}  // namespace tessera::x86
#endif
