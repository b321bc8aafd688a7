// One-row kernels (a row against up to four tokens a tile, through
// multi_dot) for the formats without register tiles: the low-bit K-quants
// Q2_K and Q3_K and the codebook formats IQ4_NL, IQ4_XS and MXFP4, over
// plain quantized activation rows (Q8_K, or Q8_0 for IQ4_NL and MXFP4;
// ActLayout::Quantized). A block's weights are unpacked once per tile into
// 32 bytes per 32 elements, in element order, so each lines up with the
// activations' qs: the 2-bit values by shifts and masks, Q3_K's third bit
// from hmask the same way, codebook indices through one byte shuffle of the
// 16-entry table. Byte dots leave int32 lanes of four products; the same
// integers on AVX2 (maddubs + madd) and VNNI (dpbusd), and every float step
// is the same code at both levels, so their results are bit-identical.
// Scalar float steps are explicit fmas: left to -ffp-contract, GCC fused
// them differently per token count.
// K-quant super-blocks sum their scaled lanes to the scalar reference's
// exact integer and combine it in float as it does; the 32-element formats
// accumulate per-lane floats, scaled per block, and sum the lanes at the end.
// Signed weights (Q3_K is made unsigned by +4 instead, its offset taken off
// through the activations' bsums) multiply through sign(y, w), which needs
// activations above -128: quantize_row writes -128 only for NaN or infinite
// inputs. Included after dot_x86_body.h, same namespace.

#if !defined(TESSERA_X86_BODY_CONTEXT)
#error "dot_lowbit_x86_body.h: include kernels/cpu/x86_body_context.h at file scope first, then this file inside a level namespace under its target pragma"
#endif
#if !defined(TESSERA_BODY_DOT_X86)
#error "dot_lowbit_x86_body.h: include kernels/cpu/dot_x86_body.h first, same namespace"
#endif
#define TESSERA_BODY_DOT_LOWBIT_X86 1

// Lane k: the sum of the products of bytes 4k..4k+3, u unsigned (at most
// 127, so AVX2's int16 pair sums cannot saturate) times s signed.
inline __m256i byte_dot(__m256i u, __m256i s) {
    if constexpr (kVnni) {
        return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
    } else {
        return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
    }
}

// Signed weights times signed activations (y > -128).
inline __m256i signed_byte_dot(__m256i w, __m256i y) {
    return byte_dot(_mm256_sign_epi8(w, w), _mm256_sign_epi8(y, w));
}

inline int hsum_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

// The table values of 32 elements whose 4-bit indices are packed as
// IQ4_NL's: element j in the low nibble of qs[j], j + 16 in the high one.
inline __m256i codebook32(const uint8_t* qs, __m256i table) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    const __m256i idx = _mm256_set_m128i(_mm_srli_epi16(b, 4), b);
    return _mm256_shuffle_epi8(table, _mm256_and_si256(idx, _mm256_set1_epi8(0x0F)));
}

inline __m256i table_both_lanes(const int8_t (&table)[16]) {
    return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table)));
}

// Bits 2j, 2j + 1 of each of 32 bytes: elements 32j.. of a 128-element half
// of a Q2_K / Q3_K block.
inline __m256i two_bits32(__m256i qs, int j) {
    return _mm256_and_si256(_mm256_srl_epi16(qs, _mm_cvtsi32_si128(2 * j)), _mm256_set1_epi8(3));
}

// int16 lanes 0-7 = byte 2c of scales16, lanes 8-15 = byte 2c + 1,
// sign-extended: the scales of the two 16-element groups of 32-element
// chunk c, in the order maddubs leaves their pair sums.
inline __m256i group_scales16(__m128i scales16, int c) {
    const __m128i pick = _mm_add_epi8(_mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),
                                      _mm_set1_epi8(static_cast<char>(2 * c)));
    return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(scales16, pick));
}

// Lane k: scale16 times the products of bytes 4k..4k+3 (u unsigned, s
// signed), the scale applied to maddubs' int16 pair sums by madd, at both
// levels (one instruction less than a byte dot and a 32-bit multiply). The
// pair sums stay below 2^15 (u at most 127); each lane below 2^31 for the
// scales here (at most 63 in magnitude).
inline __m256i scaled_byte_dot(__m256i u, __m256i s, __m256i scale16) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), scale16);
}

// ---- 32-element codebook formats against Q8_0 ----

inline float iq4_nl_scale(const BlockIQ4_NL& b) { return h2f(b.d); }
inline float mxfp4_scale(const BlockMXFP4& b) { return e8m0_half(b.e); }

template <class Block, const int8_t (&kTable)[16], float (*kScale)(const Block&)>
struct CodebookQ8_0 {
    template <int NT>
    struct Tile {
        static void run(int64_t n, const void* w, const uint8_t* act, size_t stride, float* out) {
            const Block* x = static_cast<const Block*>(w);
            const BlockQ8_0* y[NT];
            act_rows(act, stride, y);
            const __m256i table = table_both_lanes(kTable);
            __m256 acc[NT];
            for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
            for (int64_t i = 0; i < n / kQK; ++i) {
                const __m256i wv = codebook32(x[i].qs, table);
                const float dx = kScale(x[i]);
                for (int t = 0; t < NT; ++t) {
                    const __m256i lanes = signed_byte_dot(wv, load256(y[t][i].qs));
                    acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(dx * h2f(y[t][i].d)), _mm256_cvtepi32_ps(lanes), acc[t]);
                }
            }
            for (int t = 0; t < NT; ++t) out[t] = hsum_ps(acc[t]);
        }
    };
};

template <int NT>
using IQ4_NLTile = CodebookQ8_0<BlockIQ4_NL, kIq4Values, iq4_nl_scale>::Tile<NT>;
template <int NT>
using MXFP4Tile = CodebookQ8_0<BlockMXFP4, kMxfp4Values, mxfp4_scale>::Tile<NT>;

// ---- 256-element formats against Q8_K: an exact integer per super-block ----

template <int NT>
struct IQ4_XSTile {
    static void run(int64_t n, const void* w, const uint8_t* act, size_t stride, float* out) {
        const BlockIQ4_XS* x = static_cast<const BlockIQ4_XS*>(w);
        const BlockQ8_K* y[NT];
        act_rows(act, stride, y);
        const __m256i table = table_both_lanes(kIq4Values);
        float sum[NT] = {};
        for (int64_t i = 0; i < n / kQKK; ++i) {
            __m256i lanes[NT];
            for (int t = 0; t < NT; ++t) lanes[t] = _mm256_setzero_si256();
            for (int s = 0; s < 8; ++s) {
                const __m256i wv = codebook32(x[i].qs + 16 * s, table);
                const __m256i wabs = _mm256_sign_epi8(wv, wv);
                const __m256i ls = _mm256_set1_epi16(static_cast<int16_t>(iq4xs_scale(x[i], s) - 32));
                for (int t = 0; t < NT; ++t) {
                    const __m256i ys = _mm256_sign_epi8(load256(y[t][i].qs + 32 * s), wv);
                    lanes[t] = _mm256_add_epi32(lanes[t], scaled_byte_dot(wabs, ys, ls));
                }
            }
            const float dx = h2f(x[i].d);
            for (int t = 0; t < NT; ++t) sum[t] = std::fma(dx * y[t][i].d, static_cast<float>(hsum_epi32(lanes[t])), sum[t]);
        }
        for (int t = 0; t < NT; ++t) out[t] = sum[t];
    }
};

// sum_g m_g * bsums_g of one token: 16 byte-sized factors times its int16 group sums.
inline int bsums_dot(__m128i factors16, const int16_t* bsums, bool is_signed) {
    const __m256i f = is_signed ? _mm256_cvtepi8_epi16(factors16) : _mm256_cvtepu8_epi16(factors16);
    return hsum_epi32(_mm256_madd_epi16(f, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bsums))));
}

template <int NT>
struct Q2_KTile {
    static void run(int64_t n, const void* w, const uint8_t* act, size_t stride, float* out) {
        const BlockQ2_K* x = static_cast<const BlockQ2_K*>(w);
        const BlockQ8_K* y[NT];
        act_rows(act, stride, y);
        float sum[NT] = {};
        for (int64_t i = 0; i < n / kQKK; ++i) {
            const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x[i].scales));
            const __m128i scales = _mm_and_si128(packed, _mm_set1_epi8(0x0F));
            const __m128i mins = _mm_and_si128(_mm_srli_epi16(packed, 4), _mm_set1_epi8(0x0F));
            __m256i lanes[NT];
            for (int t = 0; t < NT; ++t) lanes[t] = _mm256_setzero_si256();
            for (int h = 0; h < 2; ++h) {
                const __m256i qs = load256(x[i].qs + 32 * h);
                for (int j = 0; j < 4; ++j) {
                    const int c = 4 * h + j;
                    const __m256i q = two_bits32(qs, j);
                    const __m256i sc = group_scales16(scales, c);
                    for (int t = 0; t < NT; ++t) {
                        lanes[t] = _mm256_add_epi32(lanes[t], scaled_byte_dot(q, load256(y[t][i].qs + 32 * c), sc));
                    }
                }
            }
            const float dx = h2f(x[i].d), dmx = h2f(x[i].dmin);
            for (int t = 0; t < NT; ++t) {
                const int summ = bsums_dot(mins, y[t][i].bsums, false);
                const float d = dx * y[t][i].d, dmin = dmx * y[t][i].d;
                sum[t] += std::fma(d, static_cast<float>(hsum_epi32(lanes[t])), -(dmin * static_cast<float>(summ)));
            }
        }
        for (int t = 0; t < NT; ++t) out[t] = sum[t];
    }
};

// Q3_K's values q (-4..3) as q + 4 = two bits + 4 * hmask bit (0..7):
// sum_g s_g * dot(q, y)_g = sum_g s_g * dot(q + 4, y)_g - 4 * sum_g s_g * bsums_g.
template <int NT>
struct Q3_KTile {
    static void run(int64_t n, const void* w, const uint8_t* act, size_t stride, float* out) {
        const BlockQ3_K* x = static_cast<const BlockQ3_K*>(w);
        const BlockQ8_K* y[NT];
        act_rows(act, stride, y);
        float sum[NT] = {};
        alignas(16) int8_t sc[16];
        for (int64_t i = 0; i < n / kQKK; ++i) {
            for (int g = 0; g < 16; ++g) sc[g] = static_cast<int8_t>(q3k_scale(x[i].scales, g) - 32);
            const __m128i scales = _mm_load_si128(reinterpret_cast<const __m128i*>(sc));
            const __m256i hmask = load256(x[i].hmask);
            __m256i lanes[NT];
            for (int t = 0; t < NT; ++t) lanes[t] = _mm256_setzero_si256();
            for (int h = 0; h < 2; ++h) {
                const __m256i qs = load256(x[i].qs + 32 * h);
                for (int j = 0; j < 4; ++j) {
                    const int c = 4 * h + j;
                    const __m256i hbit = _mm256_and_si256(_mm256_srl_epi16(hmask, _mm_cvtsi32_si128(c)),
                                                          _mm256_set1_epi8(1));
                    const __m256i q = _mm256_or_si256(two_bits32(qs, j), _mm256_slli_epi16(hbit, 2));
                    const __m256i s = group_scales16(scales, c);
                    for (int t = 0; t < NT; ++t) {
                        lanes[t] = _mm256_add_epi32(lanes[t], scaled_byte_dot(q, load256(y[t][i].qs + 32 * c), s));
                    }
                }
            }
            const float dx = h2f(x[i].d);
            for (int t = 0; t < NT; ++t) {
                const int sumi = hsum_epi32(lanes[t]) - 4 * bsums_dot(scales, y[t][i].bsums, true);
                sum[t] = std::fma(dx * y[t][i].d, static_cast<float>(sumi), sum[t]);
            }
        }
        for (int t = 0; t < NT; ++t) out[t] = sum[t];
    }
};
