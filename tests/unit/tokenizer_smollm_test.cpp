// SmolLM2's byte-level BPE tokenizer (tokenizer.ggml.pre = smollm) against a
// golden file of 2,400 generated strings tokenized by llama.cpp
// (tools/gen_tokenizer_golden.py), plus decode and streaming round trips.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace tessera {
namespace {

const char* kGolden = TESSERA_SOURCE_DIR "/tests/golden/tokenizer/smollm2_135m.jsonl";

struct GoldenCase {
    std::string text;
    std::vector<int32_t> ids;
};

class SmolLmTokenizer : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        const char* path = std::getenv("TESSERA_MODEL");
        if (path == nullptr || *path == '\0') return;
        auto gguf = GgufFile::open(path);
        ASSERT_TRUE(gguf.ok()) << gguf.error();
        auto tok = Tokenizer::from_gguf(*gguf);
        ASSERT_TRUE(tok.ok()) << tok.error();
        tokenizer_ = new Tokenizer(std::move(*tok));
        std::ifstream f(kGolden);
        std::string line;
        ASSERT_TRUE(std::getline(f, line)) << "cannot read " << kGolden;
        meta_ = nlohmann::json::parse(line).at("meta").dump();
        cases_ = new std::vector<GoldenCase>();
        while (std::getline(f, line)) {
            const auto j = nlohmann::json::parse(line);
            cases_->push_back({j.at("text").get<std::string>(), j.at("ids").get<std::vector<int32_t>>()});
        }
    }
    static void TearDownTestSuite() {
        delete tokenizer_;
        delete cases_;
        tokenizer_ = nullptr;
        cases_ = nullptr;
    }
    void SetUp() override {
        if (tokenizer_ == nullptr) GTEST_SKIP() << "TESSERA_MODEL is not set (path to SmolLM2-135M-Instruct GGUF)";
    }

    static Tokenizer* tokenizer_;
    static std::vector<GoldenCase>* cases_;
    static std::string meta_;
};

Tokenizer* SmolLmTokenizer::tokenizer_ = nullptr;
std::vector<GoldenCase>* SmolLmTokenizer::cases_ = nullptr;
std::string SmolLmTokenizer::meta_;

TEST_F(SmolLmTokenizer, MatchesGoldenIds) {
    ASSERT_GE(cases_->size(), 2000u);
    size_t mismatches = 0;
    for (const GoldenCase& c : *cases_) {
        const auto ids = tokenizer_->encode(c.text, {});
        if (ids == c.ids) continue;
        if (++mismatches <= 10) {
            ADD_FAILURE() << "text: " << nlohmann::json(c.text).dump() << "\n  got:      "
                          << nlohmann::json(ids).dump() << "\n  expected: " << nlohmann::json(c.ids).dump();
        }
    }
    EXPECT_EQ(mismatches, 0u) << "of " << cases_->size() << " golden cases (" << meta_ << ")";
}

TEST_F(SmolLmTokenizer, DecodeRoundTrips) {
    for (const GoldenCase& c : *cases_) {
        ASSERT_EQ(tokenizer_->decode(tokenizer_->encode(c.text, {})), c.text);
    }
}

TEST_F(SmolLmTokenizer, IncrementalDetokenizationMatchesDecode) {
    for (const GoldenCase& c : *cases_) {
        IncrementalDetokenizer detok(*tokenizer_, {.sequence_start = true});
        std::string streamed;
        for (int32_t id : c.ids) {
            const std::string chunk = detok.push(id);
            ASSERT_TRUE(utf8_is_valid(chunk)) << nlohmann::json(c.text).dump();
            streamed += chunk;
        }
        streamed += detok.flush();
        ASSERT_EQ(streamed, tokenizer_->decode(c.ids));
    }
}

TEST_F(SmolLmTokenizer, SpecialTokensAndEndOfGeneration) {
    const Tokenizer& t = *tokenizer_;
    EXPECT_EQ(t.n_vocab(), 49152);
    EXPECT_EQ(t.bos(), 1);
    EXPECT_EQ(t.eos(), 2);
    EXPECT_FALSE(t.add_bos());
    EXPECT_TRUE(t.is_eog(2));  // <|im_end|>
    EXPECT_TRUE(t.is_eog(0));  // <|endoftext|>
    EXPECT_FALSE(t.is_eog(1));
    const auto ids = t.encode("<|im_start|>user\nHi<|im_end|>\n", {.parse_special = true});
    ASSERT_GE(ids.size(), 4u);
    EXPECT_EQ(ids.front(), 1);
    EXPECT_EQ(ids[ids.size() - 2], 2);
    EXPECT_EQ(t.decode(ids), "user\nHi\n");
    EXPECT_EQ(t.decode(ids, {.render_special = true}), "<|im_start|>user\nHi<|im_end|>\n");
    // Without parse_special the same text is ordinary characters.
    const auto plain = t.encode("<|im_start|>", {});
    EXPECT_GT(plain.size(), 1u);
    EXPECT_EQ(t.decode(plain), "<|im_start|>");
}

// The server's byte-length refusal (prompt too long before encoding) needs
// every encoding of B bytes to have at least ceil(B / max_token_bytes())
// tokens: the golden strings, and runs of the longest token's own bytes.
TEST_F(SmolLmTokenizer, MaxTokenBytesBoundsEveryEncoding) {
    const Tokenizer& tok = *tokenizer_;
    ASSERT_GT(tok.max_token_bytes(), 0u);
    for (const GoldenCase& c : *cases_) EXPECT_GE(c.ids.size(), tok.min_tokens_for_bytes(c.text.size())) << c.text;
    int32_t longest = 0;
    for (int32_t id = 1; id < tok.n_vocab(); ++id) {
        if (tok.token_to_piece(id, {.render_special = true}).size() > tok.token_to_piece(longest, {.render_special = true}).size()) longest = id;
    }
    std::string run;
    for (int i = 0; i < 64; ++i) run += tok.token_to_piece(longest, {.render_special = true});
    for (const std::string& text : {run, std::string(4096, ' '), std::string(4096, '\n'), std::string(4096, '0')}) {
        EXPECT_GE(tok.encode(text, {.add_special = true, .parse_special = true}).size(), tok.min_tokens_for_bytes(text.size()))
            << tok.max_token_bytes();
    }
    std::cout << "max_token_bytes " << tok.max_token_bytes() << ", longest piece " << tok.token_to_piece(longest, {.render_special = true}).size()
              << " bytes\n";
}

}  // namespace
}  // namespace tessera
