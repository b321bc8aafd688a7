// llama.cpp's own tokenizer suite: every ggml-vocab-*.gguf that ships with
// its .inp/.out cases (tools/fetch_vocab_suite.sh caches them under
// models/ggml-vocab/), each case encoded without BOS or special parsing and
// compared with llama.cpp's ids.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "fixtures.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_test_util.h"

namespace tessera {
namespace {

// TESSERA_VOCAB_SUITE if set, else the checkout's models/ggml-vocab/.
std::string suite_dir() {
    const char* env = std::getenv("TESSERA_VOCAB_SUITE");
    return env != nullptr && *env != '\0' ? std::string(env) + "/"
                                          : std::string(TESSERA_SOURCE_DIR "/models/ggml-vocab/");
}

class VocabSuite : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override { TESSERA_REQUIRE_FIXTURE(suite_dir()); }
};

TEST_P(VocabSuite, EveryCaseMatchesLlamaCpp) {
    const std::string base = suite_dir() + "ggml-vocab-" + GetParam() + ".gguf";
    auto gguf = GgufFile::open(base);
    ASSERT_TRUE(gguf.ok()) << gguf.error();
    auto tok = Tokenizer::from_gguf(*gguf);
    ASSERT_TRUE(tok.ok()) << tok.error();
    const auto cases = test::read_vocab_cases(base);
    ASSERT_GE(cases.size(), 30u);
    const bool byte_level = tok->vocab().kind() == VocabKind::Bpe;
    size_t mismatches = 0;
    for (const test::VocabCase& c : cases) {
        const auto ids = tok->encode(c.text, {});
        if (ids != c.ids && ++mismatches <= 5) {
            ADD_FAILURE() << "text: [" << c.text << "]\n  got:      " << ::testing::PrintToString(ids)
                          << "\n  expected: " << ::testing::PrintToString(c.ids);
        }
        // Byte-level BPE loses nothing, so decoding gives the text back.
        if (byte_level) {
            EXPECT_EQ(tok->decode(ids), c.text);
        }
    }
    EXPECT_EQ(mismatches, 0u) << "of " << cases.size() << " cases";
}

// Every vocabulary of llama.cpp's suite that has cases.
INSTANTIATE_TEST_SUITE_P(LlamaCpp, VocabSuite,
                         ::testing::Values("gpt-2", "llama-spm", "llama-bpe", "phi-3", "qwen2", "qwen35",
                                           "deepseek-llm", "deepseek-coder", "falcon", "mpt", "starcoder",
                                           "refact", "command-r", "bert-bge", "gemma-4"),
                         [](const auto& info) {
                             std::string name = info.param;
                             for (char& c : name) c = (c == '-') ? '_' : c;
                             return name;
                         });

// The suite's vocabularies without cases (aquila, baichuan, gpt-neox,
// nomic-bert-moe: SentencePiece, BPE and Unigram) load and encode text.
TEST(VocabSuiteFiles, EveryVocabularyLoads) {
    const std::string dir = suite_dir();
    TESSERA_REQUIRE_FIXTURE(dir);
    size_t loaded = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        const std::string path = e.path().string();
        if (e.path().extension() != ".gguf") continue;
        auto gguf = GgufFile::open(path);
        ASSERT_TRUE(gguf.ok()) << path << ": " << gguf.error();
        auto tok = Tokenizer::from_gguf(*gguf);
        ASSERT_TRUE(tok.ok()) << path << ": " << tok.error();
        EXPECT_FALSE(tok->encode("Hello world, 你好 123", {}).empty()) << path;
        ++loaded;
    }
    EXPECT_GE(loaded, 19u);
}

}  // namespace
}  // namespace tessera
