// The bounds-checked byte walker behind GgufFile::parse. Internal to gguf/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gguf/gguf_file.h"

namespace tessera {

class GgufParser {
public:
    GgufParser(const uint8_t* data, size_t size) : data_(data), size_(size) {}
    Expected<GgufFile> parse();

private:
    size_t remaining() const { return size_ - pos_; }
    Status read_bytes(void* dst, size_t n, const char* what);
    template <class T>
    Status read_scalar(T& out, const char* what) { return read_bytes(&out, sizeof(T), what); }
    Status read_string(std::string& out, const char* what);
    Status read_string_view(std::string_view& out, const char* what);  // a view into the buffer
    Status read_value(GgufValueType type, GgufValue& out, int depth);
    Status read_array(GgufValue& out, int depth);
    Status read_header(GgufFile& file, uint64_t& n_tensors, uint64_t& n_kv);
    Status read_metadata(GgufFile& file, uint64_t n_kv);
    Status read_alignment(GgufFile& file);
    Status read_tensor_infos(GgufFile& file, uint64_t n_tensors);
    Status place_tensors(GgufFile& file);

    const uint8_t* data_;
    size_t size_;
    size_t pos_ = 0;
};

}  // namespace tessera
