// Block geometry of GGUF tensor types, from the GGUF specification.
#include "gguf/ggml_type.h"

namespace tessera {

std::optional<GgmlTypeInfo> ggml_type_info(uint32_t raw_type) {
    switch (static_cast<GgmlType>(raw_type)) {
        case GgmlType::F32: return GgmlTypeInfo{"F32", 1, 4};
        case GgmlType::F16: return GgmlTypeInfo{"F16", 1, 2};
        case GgmlType::BF16: return GgmlTypeInfo{"BF16", 1, 2};
        case GgmlType::F64: return GgmlTypeInfo{"F64", 1, 8};
        case GgmlType::I8: return GgmlTypeInfo{"I8", 1, 1};
        case GgmlType::I16: return GgmlTypeInfo{"I16", 1, 2};
        case GgmlType::I32: return GgmlTypeInfo{"I32", 1, 4};
        case GgmlType::I64: return GgmlTypeInfo{"I64", 1, 8};
        case GgmlType::Q4_0: return GgmlTypeInfo{"Q4_0", 32, 18};
        case GgmlType::Q4_1: return GgmlTypeInfo{"Q4_1", 32, 20};
        case GgmlType::Q5_0: return GgmlTypeInfo{"Q5_0", 32, 22};
        case GgmlType::Q5_1: return GgmlTypeInfo{"Q5_1", 32, 24};
        case GgmlType::Q8_0: return GgmlTypeInfo{"Q8_0", 32, 34};
        case GgmlType::Q8_1: return GgmlTypeInfo{"Q8_1", 32, 36};
        case GgmlType::Q2_K: return GgmlTypeInfo{"Q2_K", 256, 84};
        case GgmlType::Q3_K: return GgmlTypeInfo{"Q3_K", 256, 110};
        case GgmlType::Q4_K: return GgmlTypeInfo{"Q4_K", 256, 144};
        case GgmlType::Q5_K: return GgmlTypeInfo{"Q5_K", 256, 176};
        case GgmlType::Q6_K: return GgmlTypeInfo{"Q6_K", 256, 210};
        case GgmlType::Q8_K: return GgmlTypeInfo{"Q8_K", 256, 292};
        case GgmlType::IQ4_NL: return GgmlTypeInfo{"IQ4_NL", 32, 18};
        case GgmlType::IQ4_XS: return GgmlTypeInfo{"IQ4_XS", 256, 136};
        case GgmlType::MXFP4: return GgmlTypeInfo{"MXFP4", 32, 17};
    }
    return std::nullopt;
}

const char* ggml_type_name(GgmlType type) {
    auto info = ggml_type_info(static_cast<uint32_t>(type));
    return info ? info->name : "unknown";
}

std::optional<size_t> ggml_row_bytes(GgmlType type, int64_t n) {
    auto info = ggml_type_info(static_cast<uint32_t>(type));
    if (!info || n < 0 || n % info->block_size != 0) return std::nullopt;
    return static_cast<size_t>(n / info->block_size) * info->block_bytes;
}

}  // namespace tessera
