// GGUF v3 serialisation: header, metadata, tensor infos, aligned tensor data.
#include "gguf/gguf_writer.h"

#include <cstdio>

#include "core/check.h"

namespace tessera {

void GgufWriter::key(const std::string& k, GgufValueType type) {
    kv_.string(k);
    kv_.scalar<uint32_t>(static_cast<uint32_t>(type));
    ++n_kv_;
}

void GgufWriter::add_string(const std::string& k, const std::string& v) {
    key(k, GgufValueType::STRING);
    kv_.string(v);
}
void GgufWriter::add_uint32(const std::string& k, uint32_t v) {
    key(k, GgufValueType::UINT32);
    kv_.scalar(v);
}
void GgufWriter::add_int32(const std::string& k, int32_t v) {
    key(k, GgufValueType::INT32);
    kv_.scalar(v);
}
void GgufWriter::add_uint64(const std::string& k, uint64_t v) {
    key(k, GgufValueType::UINT64);
    kv_.scalar(v);
}
void GgufWriter::add_float32(const std::string& k, float v) {
    key(k, GgufValueType::FLOAT32);
    kv_.scalar(v);
}
void GgufWriter::add_bool(const std::string& k, bool v) {
    key(k, GgufValueType::BOOL);
    kv_.scalar<uint8_t>(v ? 1 : 0);
}
void GgufWriter::add_string_array(const std::string& k, const std::vector<std::string>& values) {
    key(k, GgufValueType::ARRAY);
    kv_.scalar<uint32_t>(static_cast<uint32_t>(GgufValueType::STRING));
    kv_.scalar<uint64_t>(values.size());
    for (const auto& s : values) kv_.string(s);
}
void GgufWriter::add_float32_array(const std::string& k, const std::vector<float>& values) {
    key(k, GgufValueType::ARRAY);
    kv_.scalar<uint32_t>(static_cast<uint32_t>(GgufValueType::FLOAT32));
    kv_.scalar<uint64_t>(values.size());
    for (float v : values) kv_.scalar(v);
}
void GgufWriter::add_int32_array(const std::string& k, const std::vector<int32_t>& values) {
    key(k, GgufValueType::ARRAY);
    kv_.scalar<uint32_t>(static_cast<uint32_t>(GgufValueType::INT32));
    kv_.scalar<uint64_t>(values.size());
    for (int32_t v : values) kv_.scalar(v);
}

void GgufWriter::add_tensor(const std::string& name, GgmlType type, std::vector<int64_t> shape,
                            std::vector<uint8_t> data) {
    TS_CHECK(!shape.empty() && shape.size() <= 4);
    int64_t rows = 1;
    for (size_t d = 1; d < shape.size(); ++d) rows *= shape[d];
    auto row_bytes = ggml_row_bytes(type, shape[0]);
    TS_CHECK(row_bytes.has_value());
    TS_CHECK(*row_bytes * static_cast<size_t>(rows) == data.size());
    tensors_.push_back(Tensor{name, type, std::move(shape), std::move(data)});
}

std::vector<uint8_t> GgufWriter::build() const {
    ByteWriter out;
    out.raw("GGUF", 4);
    out.scalar<uint32_t>(3);
    out.scalar<uint64_t>(tensors_.size());
    out.scalar<uint64_t>(n_kv_ + (alignment_ != 32 ? 1 : 0));
    out.raw(kv_.bytes().data(), kv_.bytes().size());
    if (alignment_ != 32) {
        out.string("general.alignment");
        out.scalar<uint32_t>(static_cast<uint32_t>(GgufValueType::UINT32));
        out.scalar<uint32_t>(alignment_);
    }
    uint64_t offset = 0;
    for (const auto& t : tensors_) {
        out.string(t.name);
        out.scalar<uint32_t>(static_cast<uint32_t>(t.shape.size()));
        for (int64_t ne : t.shape) out.scalar<uint64_t>(static_cast<uint64_t>(ne));
        out.scalar<uint32_t>(static_cast<uint32_t>(t.type));
        out.scalar<uint64_t>(offset);
        offset += (t.data.size() + alignment_ - 1) / alignment_ * alignment_;
    }
    out.pad_to(alignment_);
    for (const auto& t : tensors_) {
        out.raw(t.data.data(), t.data.size());
        out.pad_to(alignment_);
    }
    return std::move(out.bytes());
}

Status GgufWriter::write_file(const std::string& path) const {
    std::vector<uint8_t> bytes = build();
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return Status::error("cannot create '" + path + "'");
    size_t written = std::fwrite(bytes.data(), 1, bytes.size(), f);
    bool closed = std::fclose(f) == 0;
    if (written != bytes.size() || !closed) return Status::error("cannot write '" + path + "'");
    return Status();
}

}  // namespace tessera
