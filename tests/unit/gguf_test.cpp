// GGUF reader on valid input: round trip through the writer, typed getters,
// vocab-only fixture files and the real default model.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "fixtures.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"

namespace tessera {
namespace {

std::vector<uint8_t> f32_bytes(size_t n, float start) {
    std::vector<uint8_t> out(n * 4);
    for (size_t k = 0; k < n; ++k) {
        float v = start + static_cast<float>(k);
        std::memcpy(out.data() + 4 * k, &v, 4);
    }
    return out;
}

std::vector<uint8_t> sample_file() {
    GgufWriter w;
    w.add_string("general.architecture", "llama");
    w.add_uint32("llama.block_count", 2);
    w.add_int32("signed", -7);
    w.add_uint64("big", 1ull << 40);
    w.add_float32("llama.rope.freq_base", 10000.0f);
    w.add_bool("flag", true);
    w.add_string_array("tokenizer.ggml.tokens", {"a", "b", "c"});
    w.add_float32_array("tokenizer.ggml.scores", {0.5f, -1.0f, 2.0f});
    w.add_int32_array("tokenizer.ggml.token_type", {1, 1, 3});
    w.add_tensor("t0", GgmlType::F32, {4, 2}, f32_bytes(8, 0.0f));
    w.add_tensor("t1", GgmlType::F32, {8}, f32_bytes(8, 100.0f));
    return w.build();
}

TEST(Gguf, RoundTripsMetadataAndTensors) {
    auto bytes = sample_file();
    auto file = GgufFile::parse(bytes.data(), bytes.size());
    ASSERT_TRUE(file.ok()) << file.error();
    EXPECT_EQ(file->version(), 3u);
    EXPECT_EQ(*file->get_string("general.architecture"), "llama");
    EXPECT_EQ(*file->get_uint("llama.block_count"), 2u);
    EXPECT_EQ(*file->get_int("signed"), -7);
    EXPECT_EQ(*file->get_uint("big"), 1ull << 40);
    EXPECT_FLOAT_EQ(static_cast<float>(*file->get_float("llama.rope.freq_base")), 10000.0f);
    EXPECT_TRUE(*file->get_bool("flag"));
    EXPECT_EQ(file->get_string_array("tokenizer.ggml.tokens")->at(2), "c");
    EXPECT_DOUBLE_EQ(file->get_float_array("tokenizer.ggml.scores")->at(1), -1.0);
    EXPECT_EQ(file->get_int_array("tokenizer.ggml.token_type")->at(2), 3);

    ASSERT_EQ(file->tensors().size(), 2u);
    const GgufTensorInfo* t1 = file->find_tensor("t1");
    ASSERT_NE(t1, nullptr);
    EXPECT_EQ(t1->ne[0], 8);
    EXPECT_EQ(t1->n_bytes, 32u);
    float first;
    std::memcpy(&first, t1->data, 4);
    EXPECT_EQ(first, 100.0f);
    EXPECT_EQ(static_cast<size_t>(t1->data - bytes.data()) % 32, 0u);
}

TEST(Gguf, TypedGettersRejectWrongTypesAndMissingKeys) {
    auto bytes = sample_file();
    auto file = GgufFile::parse(bytes.data(), bytes.size());
    ASSERT_TRUE(file.ok());
    EXPECT_FALSE(file->get_uint("general.architecture").ok());
    EXPECT_FALSE(file->get_string("llama.block_count").ok());
    EXPECT_FALSE(file->get_uint("signed").ok());  // negative
    EXPECT_FALSE(file->get_float("flag").ok());
    EXPECT_FALSE(file->get_string_array("tokenizer.ggml.scores").ok());
    EXPECT_FALSE(file->get_int_array("tokenizer.ggml.scores").ok());
    auto missing = file->get_string("nope");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().find("nope"), std::string::npos);
    EXPECT_EQ(*file->get_uint_or("nope", 5), 5u);
    EXPECT_FALSE(file->get_uint_or("general.architecture", 5).ok());
}

// Arrays keep their elements by kind (scalars as 8 bytes, strings as views,
// arrays of arrays as values): every kind reads back through the getters
// and `tessera info`'s rendering.
TEST(Gguf, ArraysOfEveryElementKindReadBack) {
    ByteWriter w;
    w.raw("GGUF", 4);
    w.scalar<uint32_t>(3);
    w.scalar<uint64_t>(0);  // tensors
    w.scalar<uint64_t>(5);  // metadata
    auto array_head = [&](const char* key, GgufValueType type, uint64_t n) {
        w.string(key);
        w.scalar<uint32_t>(static_cast<uint32_t>(GgufValueType::ARRAY));
        w.scalar<uint32_t>(static_cast<uint32_t>(type));
        w.scalar<uint64_t>(n);
    };
    array_head("i8", GgufValueType::INT8, 3);
    for (int8_t v : {-3, 0, 127}) w.scalar<int8_t>(v);
    array_head("u64", GgufValueType::UINT64, 2);
    w.scalar<uint64_t>(7);
    w.scalar<uint64_t>(uint64_t{1} << 63);  // past int64
    array_head("f64", GgufValueType::FLOAT64, 2);
    w.scalar<double>(0.25);
    w.scalar<double>(-1e300);
    array_head("flags", GgufValueType::BOOL, 2);
    w.scalar<uint8_t>(1);
    w.scalar<uint8_t>(0);
    array_head("nested", GgufValueType::ARRAY, 2);
    for (std::string_view inner : {"ab", "c"}) {
        w.scalar<uint32_t>(static_cast<uint32_t>(GgufValueType::STRING));
        w.scalar<uint64_t>(inner.size());
        for (char c : inner) w.string(std::string(1, c));
    }
    const std::vector<uint8_t> bytes = w.bytes();
    auto file = GgufFile::parse(bytes.data(), bytes.size());
    ASSERT_TRUE(file.ok()) << file.error();

    EXPECT_EQ(*file->get_int_array("i8"), (std::vector<int64_t>{-3, 0, 127}));
    auto u64 = file->get_int_array("u64");
    ASSERT_FALSE(u64.ok());
    EXPECT_NE(u64.error().find("out of range"), std::string::npos);
    EXPECT_EQ(*file->get_float_array("f64"), (std::vector<double>{0.25, -1e300}));
    const GgufValue* flags = file->find("flags");
    ASSERT_NE(flags, nullptr);
    EXPECT_EQ(flags->array_size(), 2u);
    EXPECT_EQ(flags->to_display_string(), "[bool x 2] [true, false]");
    EXPECT_EQ(file->find("i8")->to_display_string(2), "[int8 x 3] [-3, 0, ...]");
    EXPECT_EQ(file->find("u64")->to_display_string(), "[uint64 x 2] [7, 9223372036854775808]");
    const GgufValue* nested = file->find("nested");
    ASSERT_NE(nested, nullptr);
    ASSERT_EQ(nested->array_size(), 2u);
    EXPECT_EQ(nested->element(0).array_size(), 2u);
    EXPECT_EQ(nested->element(1).element(0).str, "c");
    EXPECT_EQ(nested->to_display_string(), "[array x 2] [[string x 2] [\"a\", \"b\"], [string x 1] [\"c\"]]");
}

TEST(Gguf, CustomAlignmentIsHonoured) {
    GgufWriter w;
    w.set_alignment(64);
    w.add_tensor("a", GgmlType::F32, {3}, f32_bytes(3, 1.0f));
    w.add_tensor("b", GgmlType::F32, {5}, f32_bytes(5, 2.0f));
    auto bytes = w.build();
    auto file = GgufFile::parse(bytes.data(), bytes.size());
    ASSERT_TRUE(file.ok()) << file.error();
    EXPECT_EQ(file->alignment(), 64u);
    EXPECT_EQ(file->find_tensor("b")->offset, 64u);
}

TEST(Gguf, LoadsVocabOnlyFixtures) {
    const std::string vocab_dir = test::vocab_fixtures_dir();
    TESSERA_REQUIRE_FIXTURE(vocab_dir);
    for (const char* name : {"ggml-vocab-gpt-2.gguf", "ggml-vocab-llama-spm.gguf"}) {
        auto file = GgufFile::open(vocab_dir + name);
        ASSERT_TRUE(file.ok()) << name << ": " << file.error();
        EXPECT_TRUE(file->tensors().empty());
        auto tokens = file->get_string_array("tokenizer.ggml.tokens");
        ASSERT_TRUE(tokens.ok());
        EXPECT_GT(tokens->size(), 30000u);
    }
}

TEST(Gguf, LoadsTheDefaultModel) {
    const char* path = std::getenv("TESSERA_MODEL");
    if (!path) GTEST_SKIP() << "TESSERA_MODEL not set";
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file.ok()) << file.error();
    EXPECT_EQ(*file->get_string("general.architecture"), "llama");
    EXPECT_EQ(file->tensors().size(), 272u);
    const GgufTensorInfo* embd = file->find_tensor("token_embd.weight");
    ASSERT_NE(embd, nullptr);
    EXPECT_EQ(embd->type, GgmlType::Q8_0);
    EXPECT_EQ(embd->ne[0], 576);
    EXPECT_EQ(embd->ne[1], 49152);
}

TEST(Gguf, OpenReportsMissingFile) {
    auto file = GgufFile::open("/nonexistent/model.gguf");
    ASSERT_FALSE(file.ok());
    EXPECT_NE(file.error().find("/nonexistent/model.gguf"), std::string::npos);
}

}  // namespace
}  // namespace tessera
