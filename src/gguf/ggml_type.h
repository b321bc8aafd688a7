// The tensor element types a GGUF file can name, with their block geometry.
// This is part of the file format (the reader needs it to size tensors), so it
// lives here; arithmetic on these types lives in tensor/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace tessera {

// Values are GGUF's on-disk type ids.
enum class GgmlType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q8_1 = 9,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    IQ4_NL = 20,
    IQ4_XS = 23,
    I8 = 24,
    I16 = 25,
    I32 = 26,
    I64 = 27,
    F64 = 28,
    BF16 = 30,
    MXFP4 = 39,
};

struct GgmlTypeInfo {
    const char* name;
    int64_t block_size;  // elements per block
    size_t block_bytes;  // bytes per block
};

// Geometry of a known type id, or nullopt for an id this build does not know.
std::optional<GgmlTypeInfo> ggml_type_info(uint32_t raw_type);
const char* ggml_type_name(GgmlType type);

// Bytes of a row of n elements; nullopt if n is not a multiple of the block
// size or the type is unknown.
std::optional<size_t> ggml_row_bytes(GgmlType type, int64_t n);

}  // namespace tessera
