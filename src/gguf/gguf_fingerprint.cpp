// gguf_fingerprint: the parsed file fed field by field into two seeded
// hashes (core/content_hash.h), each field length-prefixed so no two
// different files serialize alike.
#include "gguf/gguf_fingerprint.h"

#include <algorithm>
#include <bit>
#include <span>
#include <string_view>

#include "core/content_hash.h"

namespace tessera {
namespace {

constexpr size_t kSampleBytes = 4096;

class Fingerprinter {
public:
    void add(std::span<const uint8_t> bytes) {
        add_word(bytes.size());
        a_ = hash_bytes(bytes, a_);
        b_ = hash_bytes(bytes, b_ ^ 0xA5A5A5A5A5A5A5A5ull);
    }
    void add(std::string_view s) { add(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size())); }
    void add_word(uint64_t w) {
        a_ = hash_bytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(&w), 8), a_);
        b_ = hash_bytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(&w), 8), b_ + 0x9E3779B97F4A7C15ull);
    }
    void add_value(const GgufValue& v) {
        add_word(static_cast<uint64_t>(v.type));
        add_word(static_cast<uint64_t>(v.i));
        add_word(v.u);
        add_word(std::bit_cast<uint64_t>(v.f));
        add(v.str);
        add_word(static_cast<uint64_t>(v.array_type));
        add(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.scalars.data()), v.scalars.size() * 8));
        add_word(v.strings.size());
        for (std::string_view s : v.strings) add(s);
        add_word(v.arrays.size());
        for (const GgufValue& a : v.arrays) add_value(a);
    }
    std::array<uint64_t, 2> result() const { return {a_, b_}; }

private:
    uint64_t a_ = 0x67677566;  // "fugg"
    uint64_t b_ = 0x66707269;
};

}  // namespace

std::array<uint64_t, 2> gguf_fingerprint(const GgufFile& file) {
    Fingerprinter f;
    f.add_word(file.version());
    f.add_word(file.alignment());
    for (const auto& [key, value] : file.metadata()) {
        f.add(key);
        f.add_value(value);
    }
    for (const GgufTensorInfo& t : file.tensors()) {
        f.add(t.name);
        f.add_word(static_cast<uint64_t>(t.type));
        for (int64_t ne : t.ne) f.add_word(static_cast<uint64_t>(ne));
        f.add_word(t.offset);
        f.add_word(t.n_bytes);
        if (t.data == nullptr) continue;
        const size_t n = std::min(kSampleBytes, t.n_bytes);
        f.add(std::span<const uint8_t>(t.data, n));
        f.add(std::span<const uint8_t>(t.data + t.n_bytes - n, n));
    }
    return f.result();
}

}  // namespace tessera
