// GGUF reader on valid input: round trip through the writer, typed getters,
// vocab-only fixture files and the real default model.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

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

std::string fixture_dir() { return std::string(TESSERA_SOURCE_DIR) + "/../shared/fixtures/vocab/"; }

TEST(Gguf, LoadsVocabOnlyFixtures) {
    if (!std::filesystem::exists(fixture_dir())) GTEST_SKIP() << "no ../shared/fixtures";
    for (const char* name : {"ggml-vocab-gpt-2.gguf", "ggml-vocab-llama-spm.gguf"}) {
        auto file = GgufFile::open(fixture_dir() + name);
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
