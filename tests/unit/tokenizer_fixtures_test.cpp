// Checks the tokenizers against llama.cpp's vocabulary test fixtures
// (shared/fixtures/vocab): GPT-2 byte-level BPE and Llama 2 SentencePiece, every
// fixture case plus a generated golden corpus, without BOS or special parsing.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "fixtures.h"
#include "tokenizer_test_util.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace tessera {
namespace {

class FixtureTest : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override { TESSERA_REQUIRE_FIXTURE(vocab_dir_); }
    const std::string vocab_dir_ = test::vocab_fixtures_dir();
};

TEST_P(FixtureTest, EveryCaseMatchesLlamaCpp) {
    const std::string base = vocab_dir_ + "ggml-vocab-" + GetParam() + ".gguf";
    auto gguf = GgufFile::open(base);
    ASSERT_TRUE(gguf.ok()) << gguf.error();
    auto tok = Tokenizer::from_gguf(*gguf);
    ASSERT_TRUE(tok.ok()) << tok.error();
    const auto cases = test::read_vocab_cases(base);
    ASSERT_GE(cases.size(), 40u);
    int mismatches = 0;
    for (const test::VocabCase& c : cases) {
        const auto ids = tok->encode(c.text, {});
        if (ids != c.ids) ++mismatches;
        EXPECT_EQ(ids, c.ids) << "text: [" << c.text << "]";
        // Every fixture string is valid UTF-8, so decoding gives it back.
        EXPECT_EQ(tok->decode(ids), c.text);
    }
    EXPECT_EQ(mismatches, 0) << "of " << cases.size() << " cases";
}

// tests/golden/tokenizer/<name>.jsonl: 1,200 strings from
// tools/gen_tokenizer_golden.py, tokenized by llama.cpp (see the first line).
TEST_P(FixtureTest, GoldenCorpusMatchesLlamaCpp) {
    auto gguf = GgufFile::open(vocab_dir_ + "ggml-vocab-" + GetParam() + ".gguf");
    ASSERT_TRUE(gguf.ok()) << gguf.error();
    auto tok = Tokenizer::from_gguf(*gguf);
    ASSERT_TRUE(tok.ok()) << tok.error();
    const std::string name = GetParam() == "gpt-2" ? "gpt2" : "llama_spm";
    std::ifstream f(TESSERA_SOURCE_DIR "/tests/golden/tokenizer/" + name + ".jsonl");
    std::string line;
    ASSERT_TRUE(std::getline(f, line)) << "missing golden file for " << name;
    size_t n = 0;
    size_t mismatches = 0;
    while (std::getline(f, line)) {
        const auto j = nlohmann::json::parse(line);
        const auto text = j.at("text").get<std::string>();
        const auto expected = j.at("ids").get<std::vector<int32_t>>();
        const auto ids = tok->encode(text, {});
        ++n;
        if (ids != expected && ++mismatches <= 5) {
            ADD_FAILURE() << "text: " << nlohmann::json(text).dump() << "\n  got:      "
                          << nlohmann::json(ids).dump() << "\n  expected: " << nlohmann::json(expected).dump();
        }
        ASSERT_EQ(tok->decode(ids), text);
        IncrementalDetokenizer detok(*tok, {.sequence_start = true});
        std::string streamed;
        for (int32_t id : ids) {
            const std::string chunk = detok.push(id);
            ASSERT_TRUE(utf8_is_valid(chunk));
            streamed += chunk;
        }
        ASSERT_EQ(streamed + detok.flush(), text);
    }
    EXPECT_GE(n, 1000u);
    EXPECT_EQ(mismatches, 0u) << "of " << n;
}

INSTANTIATE_TEST_SUITE_P(Vocabs, FixtureTest, ::testing::Values("gpt-2", "llama-spm"));

TEST(FixtureVocab, SpecialIdsAndFlags) {
    const std::string vocab_dir = test::vocab_fixtures_dir();
    TESSERA_REQUIRE_FIXTURE(vocab_dir);
    auto spm_file = GgufFile::open(vocab_dir + "ggml-vocab-llama-spm.gguf");
    ASSERT_TRUE(spm_file.ok()) << spm_file.error();
    auto spm = Tokenizer::from_gguf(*spm_file);
    ASSERT_TRUE(spm.ok()) << spm.error();
    EXPECT_EQ(spm->n_vocab(), 32000);
    EXPECT_EQ(spm->bos(), 1);
    EXPECT_EQ(spm->eos(), 2);
    EXPECT_TRUE(spm->add_bos());
    EXPECT_TRUE(spm->add_space_prefix());
    EXPECT_TRUE(spm->is_eog(2));
    EXPECT_FALSE(spm->is_eog(1));
    EXPECT_EQ(spm->token_text(1), "<s>");
    EXPECT_EQ(spm->token_to_piece(1), "");
    EXPECT_EQ(spm->token_to_piece(1, {.render_special = true}), "<s>");
    EXPECT_EQ(spm->token_to_piece(3 + 0x41), "A");  // <0x41>
    const auto with_bos = spm->encode("Hello", {.add_special = true});
    ASSERT_FALSE(with_bos.empty());
    EXPECT_EQ(with_bos.front(), 1);
    // Special text is parsed only on request.
    EXPECT_EQ(spm->encode("</s>", {.parse_special = true}), std::vector<int32_t>({2}));
    EXPECT_NE(spm->encode("</s>", {}), std::vector<int32_t>({2}));

    auto bpe_file = GgufFile::open(vocab_dir + "ggml-vocab-gpt-2.gguf");
    ASSERT_TRUE(bpe_file.ok()) << bpe_file.error();
    auto bpe = Tokenizer::from_gguf(*bpe_file);
    ASSERT_TRUE(bpe.ok()) << bpe.error();
    EXPECT_EQ(bpe->n_vocab(), 50257);
    EXPECT_EQ(bpe->eos(), 50256);
    EXPECT_FALSE(bpe->add_bos());
    EXPECT_FALSE(bpe->add_space_prefix());
    EXPECT_TRUE(bpe->is_eog(50256));
    EXPECT_EQ(bpe->token_to_piece(bpe->encode(" Hello", {}).front()), " Hello");
    EXPECT_EQ(bpe->encode("<|endoftext|>", {.parse_special = true}), std::vector<int32_t>({50256}));
}

}  // namespace
}  // namespace tessera
