// Builds GGUF files (version 3). Tests make small models and hostile files in
// memory; `tessera quantize` copies a model's metadata and streams tensors
// that are produced one at a time while the file is written.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/ggml_type.h"
#include "gguf/gguf_file.h"

namespace tessera {

// Little-endian append-only byte buffer with GGUF's primitive encodings.
class ByteWriter {
public:
    template <class T>
    void scalar(T v) { raw(&v, sizeof(T)); }
    void string(const std::string& s) {
        scalar<uint64_t>(s.size());
        raw(s.data(), s.size());
    }
    void raw(const void* data, size_t n) {
        if (n == 0) return;
        size_t at = bytes_.size();
        bytes_.resize(at + n);
        std::memcpy(bytes_.data() + at, data, n);
    }
    void pad_to(size_t alignment) {
        while (bytes_.size() % alignment != 0) bytes_.push_back(0);
    }
    std::vector<uint8_t>& bytes() { return bytes_; }
    const std::vector<uint8_t>& bytes() const { return bytes_; }

private:
    std::vector<uint8_t> bytes_;
};

class GgufWriter {
public:
    void add_string(const std::string& key, const std::string& value);
    void add_uint32(const std::string& key, uint32_t value);
    void add_int32(const std::string& key, int32_t value);
    void add_uint64(const std::string& key, uint64_t value);
    void add_float32(const std::string& key, float value);
    void add_bool(const std::string& key, bool value);
    void add_string_array(const std::string& key, const std::vector<std::string>& values);
    void add_float32_array(const std::string& key, const std::vector<float>& values);
    void add_int32_array(const std::string& key, const std::vector<int32_t>& values);
    // Any parsed value, arrays (of arrays) included: copies a file's metadata.
    void add_value(const std::string& key, const GgufValue& value);
    // `data` must hold exactly the bytes of a tensor of that type and shape.
    void add_tensor(const std::string& name, GgmlType type, std::vector<int64_t> shape,
                    std::vector<uint8_t> data);
    // A tensor whose bytes are made only when write_file reaches it, so a
    // whole model never sits in memory; `produce` must return n_bytes bytes
    // (or an error, which aborts the write).
    using Producer = std::function<Expected<std::vector<uint8_t>>()>;
    void add_tensor(const std::string& name, GgmlType type, std::vector<int64_t> shape, Producer produce);
    void set_alignment(uint32_t alignment) { alignment_ = alignment; }

    // In memory: every tensor must have been given as bytes.
    std::vector<uint8_t> build() const;
    Status write_file(const std::string& path) const;

private:
    struct Tensor {
        std::string name;
        GgmlType type;
        std::vector<int64_t> shape;
        size_t n_bytes = 0;
        std::vector<uint8_t> data;  // when produce is empty
        Producer produce;
    };
    void key(const std::string& k, GgufValueType type);
    void value_payload(const GgufValue& v);
    std::vector<uint8_t> header() const;
    ByteWriter kv_;
    uint64_t n_kv_ = 0;
    uint32_t alignment_ = 32;
    std::vector<Tensor> tensors_;
};

}  // namespace tessera
