// Hostile GGUF files: each handcrafted case must be rejected with a message
// (never a crash, never a huge allocation), and every truncation of a valid
// file must be rejected cleanly. Runs under ASan/UBSan in CI.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"

namespace tessera {
namespace {

constexpr uint64_t kHuge = 1ull << 62;
constexpr uint32_t kU32 = static_cast<uint32_t>(GgufValueType::UINT32);
constexpr uint32_t kStr = static_cast<uint32_t>(GgufValueType::STRING);
constexpr uint32_t kArr = static_cast<uint32_t>(GgufValueType::ARRAY);
constexpr uint32_t kBool = static_cast<uint32_t>(GgufValueType::BOOL);
constexpr uint32_t kU64 = static_cast<uint32_t>(GgufValueType::UINT64);
constexpr uint32_t kU8 = static_cast<uint32_t>(GgufValueType::UINT8);

void header(ByteWriter& w, uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    w.raw("GGUF", 4);
    w.scalar<uint32_t>(version);
    w.scalar<uint64_t>(n_tensors);
    w.scalar<uint64_t>(n_kv);
}

// One tensor info: name, dims, type, offset.
void tensor_info(ByteWriter& w, const std::string& name, std::vector<uint64_t> dims, uint32_t type,
                 uint64_t offset) {
    w.string(name);
    w.scalar<uint32_t>(static_cast<uint32_t>(dims.size()));
    for (uint64_t d : dims) w.scalar<uint64_t>(d);
    w.scalar<uint32_t>(type);
    w.scalar<uint64_t>(offset);
}

// A file with one F32 tensor of `dims` at `offset` and `data_bytes` of data.
std::vector<uint8_t> one_tensor(std::vector<uint64_t> dims, uint32_t type, uint64_t offset,
                                size_t data_bytes) {
    ByteWriter w;
    header(w, 1, 0);
    tensor_info(w, "t", std::move(dims), type, offset);
    w.pad_to(32);
    std::vector<uint8_t> zeros(data_bytes, 0);
    w.raw(zeros.data(), zeros.size());
    return std::move(w.bytes());
}

struct BadCase {
    const char* name;
    std::function<std::vector<uint8_t>()> make;
    const char* expect;  // substring of the error message
};

std::vector<BadCase> bad_cases() {
    auto kv_file = [](std::function<void(ByteWriter&)> body, uint64_t n_kv = 1) {
        return [body, n_kv] {
            ByteWriter w;
            header(w, 0, n_kv);
            body(w);
            return std::move(w.bytes());
        };
    };
    return {
        {"empty file", [] { return std::vector<uint8_t>{}; }, "truncated"},
        {"three bytes", [] { return std::vector<uint8_t>{'G', 'G', 'U'}; }, "truncated"},
        {"bad magic", [] { ByteWriter w; w.raw("GGML", 4); w.scalar<uint32_t>(3); return std::move(w.bytes()); }, "magic"},
        {"version 1", [] { ByteWriter w; header(w, 0, 0, 1); return std::move(w.bytes()); }, "version"},
        {"version 4", [] { ByteWriter w; header(w, 0, 0, 4); return std::move(w.bytes()); }, "version"},
        {"big-endian version", [] { ByteWriter w; header(w, 0, 0, 0x03000000); return std::move(w.bytes()); }, "version"},
        {"header cut in counts", [] { ByteWriter w; w.raw("GGUF", 4); w.scalar<uint32_t>(3); w.scalar<uint32_t>(0); return std::move(w.bytes()); }, "truncated"},
        {"huge metadata count", kv_file([](ByteWriter&) {}, kHuge), "metadata count"},
        {"huge tensor count", [] { ByteWriter w; header(w, kHuge, 0); return std::move(w.bytes()); }, "tensor count"},
        {"key length past end", kv_file([](ByteWriter& w) { w.scalar<uint64_t>(kHuge); w.raw("abcdefghijklmnop", 16); }), "claims"},
        {"key length one past end", kv_file([](ByteWriter& w) { w.scalar<uint64_t>(17); w.raw("abcdefghijklmnop", 16); }), "claims"},
        {"empty key", kv_file([](ByteWriter& w) { w.string(""); w.scalar<uint32_t>(kU32); w.scalar<uint32_t>(1); }), "empty metadata key"},
        {"unknown value type", kv_file([](ByteWriter& w) { w.string("k"); w.scalar<uint32_t>(13); w.scalar<uint32_t>(1); }), "unknown value type"},
        {"value type 0xffffffff", kv_file([](ByteWriter& w) { w.string("k"); w.scalar<uint32_t>(0xffffffffu); w.scalar<uint32_t>(1); }), "unknown value type"},
        {"string value past end", kv_file([](ByteWriter& w) { w.string("k"); w.scalar<uint32_t>(kStr); w.scalar<uint64_t>(kHuge); w.raw("xyz", 3); }), "claims"},
        {"array count past end", kv_file([](ByteWriter& w) { w.string("k"); w.scalar<uint32_t>(kArr); w.scalar<uint32_t>(kU8); w.scalar<uint64_t>(kHuge); }), "larger than the file"},
        {"array size overflows", kv_file([](ByteWriter& w) { w.string("k"); w.scalar<uint32_t>(kArr); w.scalar<uint32_t>(kU64); w.scalar<uint64_t>(std::numeric_limits<uint64_t>::max() / 4); }), "larger than the file"},
        {"array of strings past end", kv_file([](ByteWriter& w) { w.string("k"); w.scalar<uint32_t>(kArr); w.scalar<uint32_t>(kStr); w.scalar<uint64_t>(1000); w.string("a"); }), "larger than the file"},
        {"unknown array element type", kv_file([](ByteWriter& w) { w.string("k"); w.scalar<uint32_t>(kArr); w.scalar<uint32_t>(77); w.scalar<uint64_t>(1); }), "unknown array element type"},
        {"arrays nested too deep", kv_file([](ByteWriter& w) {
             w.string("k"); w.scalar<uint32_t>(kArr);
             for (int d = 0; d < 6; ++d) { w.scalar<uint32_t>(kArr); w.scalar<uint64_t>(1); }
             w.scalar<uint32_t>(kU8); w.scalar<uint64_t>(0);
             std::vector<uint8_t> pad(64, 0); w.raw(pad.data(), pad.size()); }), "nested"},
        {"bool value 2", kv_file([](ByteWriter& w) { w.string("k"); w.scalar<uint32_t>(kBool); w.scalar<uint8_t>(2); }), "invalid bool"},
        {"uint32 value cut", kv_file([](ByteWriter& w) { w.string("k"); w.scalar<uint32_t>(kU32); w.scalar<uint16_t>(1); }), "truncated"},
        {"duplicate key", kv_file([](ByteWriter& w) {
             for (int k = 0; k < 2; ++k) { w.string("dup"); w.scalar<uint32_t>(kU32); w.scalar<uint32_t>(1); } }, 2), "duplicate metadata key"},
        {"alignment of wrong type", kv_file([](ByteWriter& w) { w.string("general.alignment"); w.scalar<uint32_t>(kStr); w.string("32"); }), "general.alignment"},
        {"alignment zero", kv_file([](ByteWriter& w) { w.string("general.alignment"); w.scalar<uint32_t>(kU32); w.scalar<uint32_t>(0); }), "power of two"},
        {"alignment not a power of two", kv_file([](ByteWriter& w) { w.string("general.alignment"); w.scalar<uint32_t>(kU32); w.scalar<uint32_t>(48); }), "power of two"},
        {"zero dimensions", [] { return one_tensor({}, 0, 0, 64); }, "dimensions"},
        {"five dimensions", [] { return one_tensor({1, 1, 1, 1, 1}, 0, 0, 64); }, "dimensions"},
        {"dimension of zero", [] { return one_tensor({0}, 0, 0, 64); }, "dimension 0 is 0"},
        {"dimension above int64", [] { return one_tensor({1ull << 63}, 0, 0, 64); }, "dimension 0"},
        {"element count overflows", [] { return one_tensor({1ull << 32, 1ull << 32}, 0, 0, 64); }, "overflows"},
        {"unknown tensor type", [] { return one_tensor({16}, 99, 0, 64); }, "unknown tensor type"},
        {"row not a multiple of block", [] { return one_tensor({33}, static_cast<uint32_t>(GgmlType::Q4_0), 0, 64); }, "block size"},
        {"byte size overflows", [] { return one_tensor({256, 1ull << 56}, static_cast<uint32_t>(GgmlType::Q6_K), 0, 64); }, "overflows"},
        {"misaligned offset", [] { return one_tensor({4}, 0, 8, 64); }, "not aligned"},
        {"extent past end", [] { return one_tensor({64}, 0, 0, 128); }, "past the end"},
        {"offset far past end", [] { return one_tensor({4}, 0, 1ull << 62, 64); }, "past the end"},
        {"no data section", [] { ByteWriter w; header(w, 1, 0); tensor_info(w, "t", {4}, 0, 0); return std::move(w.bytes()); }, "truncated"},
        {"duplicate tensor name", [] {
             ByteWriter w; header(w, 2, 0);
             tensor_info(w, "t", {4}, 0, 0); tensor_info(w, "t", {4}, 0, 32);
             w.pad_to(32); std::vector<uint8_t> z(64, 0); w.raw(z.data(), z.size());
             return std::move(w.bytes()); }, "duplicate tensor name"},
        {"tensor name past end", [] { ByteWriter w; header(w, 1, 0); w.scalar<uint64_t>(kHuge); std::vector<uint8_t> z(40, 0); w.raw(z.data(), z.size()); return std::move(w.bytes()); }, "claims"},
        {"tensor info cut", [] {
             ByteWriter w; header(w, 1, 0); w.string("t"); w.scalar<uint32_t>(4);
             for (int d = 0; d < 3; ++d) w.scalar<uint64_t>(4);
             return std::move(w.bytes()); }, "truncated while reading tensor dimension"},
    };
}

TEST(GgufMalformed, EveryHandcraftedCaseIsRejectedWithAMessage) {
    auto cases = bad_cases();
    ASSERT_GE(cases.size(), 30u);
    for (const auto& c : cases) {
        std::vector<uint8_t> bytes = c.make();
        // Parse from an exact-size heap copy so ASan sees any read past the end.
        std::vector<uint8_t> exact(bytes.begin(), bytes.end());
        auto file = GgufFile::parse(exact.empty() ? nullptr : exact.data(), exact.size());
        ASSERT_FALSE(file.ok()) << c.name << " was accepted";
        EXPECT_NE(file.error().find(c.expect), std::string::npos)
            << c.name << ": message '" << file.error() << "' lacks '" << c.expect << "'";
    }
}

std::vector<uint8_t> valid_file() {
    GgufWriter w;
    w.add_string("general.architecture", "llama");
    w.add_uint32("llama.block_count", 1);
    w.add_string_array("tokenizer.ggml.tokens", {"<s>", "hello", "world"});
    w.add_float32_array("tokenizer.ggml.scores", {0.f, 1.f, 2.f});
    w.add_bool("tokenizer.ggml.add_bos_token", true);
    std::vector<uint8_t> q(18 * 2, 0x11);  // two Q4_0 blocks
    w.add_tensor("q", GgmlType::Q4_0, {64}, q);
    std::vector<uint8_t> f(32 * 4, 0);  // last tensor fills whole alignment units: no trailing pad
    w.add_tensor("f", GgmlType::F32, {32}, f);
    return w.build();
}

TEST(GgufMalformed, EveryTruncationOfAValidFileIsRejected) {
    std::vector<uint8_t> full = valid_file();
    ASSERT_TRUE(GgufFile::parse(full.data(), full.size()).ok());
    for (size_t len = 0; len < full.size(); ++len) {
        std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
        auto file = GgufFile::parse(cut.empty() ? nullptr : cut.data(), cut.size());
        ASSERT_FALSE(file.ok()) << "truncation at " << len << " of " << full.size() << " was accepted";
        EXPECT_FALSE(file.error().empty());
    }
}

TEST(GgufMalformed, CorruptedBytesNeverCrash) {
    // Flip each byte of a valid file to a few values; parsing may succeed or
    // fail, but must never read out of bounds (ASan) or abort.
    std::vector<uint8_t> full = valid_file();
    size_t rejected = 0;
    for (size_t pos = 0; pos < full.size(); ++pos) {
        for (uint8_t v : {uint8_t{0x00}, uint8_t{0xff}, uint8_t{0x7f}}) {
            std::vector<uint8_t> bad = full;
            bad[pos] = v;
            auto file = GgufFile::parse(bad.data(), bad.size());
            if (!file.ok()) ++rejected;
        }
    }
    EXPECT_GT(rejected, 0u);
}

}  // namespace
}  // namespace tessera
