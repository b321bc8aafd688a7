// Kernel tables of one x86 level: which body serves which weight format.
// Included last, after the kernel bodies, inside the level's namespace.

#if !defined(TESSERA_X86_BODY_CONTEXT)
#error "dot_select_x86_body.h: include kernels/cpu/x86_body_context.h at file scope first, then this file inside a level namespace under its target pragma"
#endif
#if !defined(TESSERA_BODY_DOT_KQUANTS_X86)
#error "dot_select_x86_body.h: include kernels/cpu/dot_kquants_x86_body.h first, same namespace"
#endif
#if !defined(TESSERA_BODY_DOT_LOWBIT_X86)
#error "dot_select_x86_body.h: include kernels/cpu/dot_lowbit_x86_body.h first, same namespace"
#endif
#if !defined(TESSERA_BODY_DOT_F16_BF16_X86)
#error "dot_select_x86_body.h: include kernels/cpu/dot_f16_bf16_x86_body.h first, same namespace"
#endif
#define TESSERA_BODY_DOT_SELECT_X86 1

// The legacy formats take kWideRows rows a call on VNNI (wide_rows_dot).
template <class Block, template <int, int> class Tile>
RowsKernel legacy_rows_kernel() {
    if constexpr (kVnni) {
        return {wide_rows_dot<Block, Tile>, ActLayout::Quads, kWideRows};
    } else {
        return {rows_dot<Tile>, ActLayout::Quads};
    }
}

inline RowsKernel select_rows_kernel(GgmlType weight) {
    switch (weight) {
        case GgmlType::Q4_0: return legacy_rows_kernel<BlockQ4_0, Q4_0Quads>();
        case GgmlType::Q4_1: return legacy_rows_kernel<BlockQ4_1, Q4_1Quads>();
        case GgmlType::Q5_0: return legacy_rows_kernel<BlockQ5_0, Q5_0Quads>();
        case GgmlType::Q5_1: return legacy_rows_kernel<BlockQ5_1, Q5_1Quads>();
        case GgmlType::Q8_0: return legacy_rows_kernel<BlockQ8_0, Q8_0Quads>();
        case GgmlType::Q4_K: return {rows_dot<Q4_KSupers>, ActLayout::Quads};
        case GgmlType::Q5_K: return {rows_dot<Q5_KSupers>, ActLayout::Quads};
        case GgmlType::Q6_K: return {rows_dot<Q6_KSupers>, ActLayout::Quads};
        case GgmlType::F16: return {f16_widened_rows, ActLayout::Widened};
        case GgmlType::BF16:
            if constexpr (kVnni) return {widened_rows<true>, ActLayout::Widened};
            return {};
        default: return {};
    }
}

inline MultiDotFn select_kernel(GgmlType weight) {
    switch (weight) {
        case GgmlType::Q4_0: return one_row_quads_dot<Q4_0Quads, GgmlType::Q8_0>;
        case GgmlType::Q4_1: return one_row_quads_dot<Q4_1Quads, GgmlType::Q8_1>;
        case GgmlType::Q5_0: return one_row_quads_dot<Q5_0Quads, GgmlType::Q8_0>;
        case GgmlType::Q5_1: return one_row_quads_dot<Q5_1Quads, GgmlType::Q8_1>;
        case GgmlType::Q8_0: return one_row_quads_dot<Q8_0Quads, GgmlType::Q8_0>;
        case GgmlType::Q4_K: return one_row_quads_dot<Q4_KSupers, GgmlType::Q8_K>;
        case GgmlType::Q5_K: return one_row_quads_dot<Q5_KSupers, GgmlType::Q8_K>;
        case GgmlType::Q6_K: return one_row_quads_dot<Q6_KSupers, GgmlType::Q8_K>;
        case GgmlType::Q2_K: return multi_dot<Q2_KTile>;
        case GgmlType::Q3_K: return multi_dot<Q3_KTile>;
        case GgmlType::IQ4_NL: return multi_dot<IQ4_NLTile>;
        case GgmlType::IQ4_XS: return multi_dot<IQ4_XSTile>;
        case GgmlType::MXFP4: return multi_dot<MXFP4Tile>;
        case GgmlType::F32: return multi_dot<F32Tile>;
        case GgmlType::F16: return multi_dot<F16Tile>;
        case GgmlType::BF16: return multi_dot<BF16Tile>;
        default: return nullptr;
    }
}
