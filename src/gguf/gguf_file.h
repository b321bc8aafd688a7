// Reader for GGUF model files (versions 2 and 3). The file is untrusted: every
// count, length, type and offset is checked against the file before use, and
// nothing is allocated from a size that was not checked. Tensor data is not
// copied: tensors point into the memory mapping.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/mapped_file.h"
#include "core/status.h"
#include "gguf/ggml_type.h"

namespace tessera {

enum class GgufValueType : uint32_t {
    UINT8 = 0,
    INT8 = 1,
    UINT16 = 2,
    INT16 = 3,
    UINT32 = 4,
    INT32 = 5,
    FLOAT32 = 6,
    BOOL = 7,
    STRING = 8,
    ARRAY = 9,
    UINT64 = 10,
    INT64 = 11,
    FLOAT64 = 12,
};

const char* gguf_value_type_name(GgufValueType type);

// One metadata value. Integers are widened into `i` (signed types) or `u`
// (unsigned types and bool); floats into `f`. An array keeps its elements
// by kind rather than a GgufValue each (96 bytes apiece came to 14 MB for a
// 49k-token vocabulary with its merges, most of a small model's overhead
// beyond its weights): integer, bool and float elements as 8 bytes each
// (u, i's bits or f's bits), strings as views into the parsed bytes, which
// the GgufFile keeps alive (its mapping, or the caller's buffer for parse()),
// arrays of arrays as GgufValues.
struct GgufValue {
    GgufValueType type = GgufValueType::UINT8;
    int64_t i = 0;
    uint64_t u = 0;
    double f = 0.0;
    std::string str;
    GgufValueType array_type = GgufValueType::UINT8;  // when type == ARRAY
    std::vector<uint64_t> scalars;                     // elements of an integer, bool or float array
    std::vector<std::string_view> strings;             // elements of a string array
    std::vector<GgufValue> arrays;                     // elements of an array of arrays

    bool is_integer() const;
    bool is_float() const { return type == GgufValueType::FLOAT32 || type == GgufValueType::FLOAT64; }
    size_t array_size() const;
    // Element k (< array_size()) as a GgufValue of array_type.
    GgufValue element(size_t k) const;
    // Render for `tessera info` (arrays abbreviated).
    std::string to_display_string(size_t max_items = 8) const;
};

struct GgufTensorInfo {
    std::string name;
    uint32_t n_dims = 0;
    int64_t ne[4] = {1, 1, 1, 1};  // ne[0] is the contiguous (row) dimension
    GgmlType type = GgmlType::F32;
    uint64_t offset = 0;           // relative to the start of the data section
    size_t n_bytes = 0;
    const uint8_t* data = nullptr;  // into the mapping (or caller's buffer)

    int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

class GgufFile {
public:
    // Maps and parses a file; the GgufFile owns the mapping.
    static Expected<GgufFile> open(const std::string& path);
    // Parses a buffer the caller keeps alive (tests, fuzzing).
    static Expected<GgufFile> parse(const uint8_t* data, size_t size);

    uint32_t version() const { return version_; }
    uint64_t alignment() const { return alignment_; }
    const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return kv_; }
    const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
    uint64_t tensor_bytes() const;  // all tensors' data together
    // The file's mapping; null for parse()d buffers.
    const MappedFile* mapping() const { return mapping_.get(); }

    const GgufValue* find(std::string_view key) const;
    const GgufTensorInfo* find_tensor(std::string_view name) const;

    // Typed getters: an error if the key is missing or has an incompatible type.
    // Integer getters accept any integer type whose value fits.
    Expected<std::string> get_string(std::string_view key) const;
    Expected<uint64_t> get_uint(std::string_view key) const;
    Expected<int64_t> get_int(std::string_view key) const;
    Expected<double> get_float(std::string_view key) const;
    Expected<bool> get_bool(std::string_view key) const;
    Expected<std::vector<std::string>> get_string_array(std::string_view key) const;
    Expected<std::vector<double>> get_float_array(std::string_view key) const;
    Expected<std::vector<int64_t>> get_int_array(std::string_view key) const;

    // Same, but a missing key gives `fallback`; a wrong type is still an error.
    Expected<std::string> get_string_or(std::string_view key, std::string fallback) const;
    Expected<uint64_t> get_uint_or(std::string_view key, uint64_t fallback) const;
    Expected<double> get_float_or(std::string_view key, double fallback) const;
    Expected<bool> get_bool_or(std::string_view key, bool fallback) const;

private:
    friend class GgufParser;
    std::unique_ptr<MappedFile> mapping_;
    uint32_t version_ = 0;
    uint64_t alignment_ = 32;
    std::vector<std::pair<std::string, GgufValue>> kv_;
    std::unordered_map<std::string, size_t> kv_index_;
    std::vector<GgufTensorInfo> tensors_;
    std::unordered_map<std::string, size_t> tensor_index_;
};

}  // namespace tessera
