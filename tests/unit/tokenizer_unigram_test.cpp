// Unigram ("t5") against Hugging Face `tokenizers`: a T5-style model trained
// by SentencePiece with the nmt_nfkc precompiled charsmap, and 1,000 strings
// with HF's ids (tests/golden/tokenizer_unigram.jsonl,
// tools/gen_tokenizer_unigram_golden.py), plus the charsmap reader on broken blobs.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "tokenizer/charsmap.h"
#include "tokenizer/tokenizer.h"

namespace tessera {
namespace {

std::string base64_decode(const std::string& in) {
    auto value = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        return c == '+' ? 62 : c == '/' ? 63 : -1;
    };
    std::string out;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : in) {
        const int v = value(c);
        if (v < 0) continue;  // padding
        acc = (acc << 6) | static_cast<uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((acc >> bits) & 0xFF));
        }
    }
    return out;
}

TEST(Unigram, MatchesHuggingFace) {
    std::ifstream f(TESSERA_SOURCE_DIR "/tests/golden/tokenizer_unigram.jsonl");
    std::string line;
    ASSERT_TRUE(std::getline(f, line));
    const auto head = nlohmann::json::parse(line);
    VocabSpec spec;
    spec.kind = VocabKind::Ugm;
    spec.tokens = head.at("tokens").get<std::vector<std::string>>();
    spec.scores = head.at("scores").get<std::vector<float>>();
    spec.types = head.at("types").get<std::vector<int32_t>>();
    spec.unk = head.at("unk").get<int32_t>();
    spec.charsmap = base64_decode(head.at("charsmap").get<std::string>());
    spec.add_space_prefix = head.at("add_space_prefix").get<bool>();
    spec.remove_extra_whitespaces = head.at("remove_extra_whitespaces").get<bool>();
    ASSERT_GT(spec.charsmap.size(), 100000u);
    auto vocab = Vocab::create(std::move(spec));
    ASSERT_TRUE(vocab.ok()) << vocab.error();
    auto tok = Tokenizer::from_vocab(std::move(*vocab));
    ASSERT_TRUE(tok.ok()) << tok.error();
    size_t n = 0;
    size_t mismatches = 0;
    while (std::getline(f, line)) {
        const auto j = nlohmann::json::parse(line);
        const auto text = j.at("text").get<std::string>();
        const auto expected = j.at("ids").get<std::vector<int32_t>>();
        const auto ids = tok->encode(text, {});
        ++n;
        if (ids != expected && ++mismatches <= 5) {
            ADD_FAILURE() << "text: " << nlohmann::json(text).dump() << "\n  got:      " << nlohmann::json(ids).dump()
                          << "\n  expected: " << nlohmann::json(expected).dump();
        }
    }
    EXPECT_GE(n, 1000u);
    EXPECT_EQ(mismatches, 0u) << "of " << n;
}

TEST(Unigram, ViterbiPrefersHigherScoreAndCollapsesUnknowns) {
    VocabSpec s;
    s.kind = VocabKind::Ugm;
    s.tokens = {"<unk>", "\xE2\x96\x81", "a", "b", "ab", "\xE2\x96\x81" "ab"};
    s.scores = {0, -1, -2, -2, -3, -10};
    s.types = {2, 1, 1, 1, 1, 1};
    s.unk = 0;
    s.add_space_prefix = true;
    s.remove_extra_whitespaces = true;
    auto v = Vocab::create(s);
    ASSERT_TRUE(v.ok()) << v.error();
    auto t = Tokenizer::from_vocab(std::move(*v));
    ASSERT_TRUE(t.ok()) << t.error();
    // "▁ab": ▁ + ab (-4) beats ▁ab (-10) and ▁ + a + b (-5).
    EXPECT_EQ(t->encode("ab", {}), (std::vector<int32_t>{1, 4}));
    // Unknown characters in a row are one <unk>; spaces collapse.
    EXPECT_EQ(t->encode("  xyz   a ", {}), (std::vector<int32_t>{1, 0, 1, 2}));
    EXPECT_EQ(t->encode("", {}), std::vector<int32_t>{});
    EXPECT_EQ(t->max_token_bytes(), 0u);
}

TEST(CharsMap, RejectsOrIgnoresBrokenBlobs) {
    EXPECT_FALSE(CharsMap::create(std::string("\x01\x00", 2)).ok());
    EXPECT_FALSE(CharsMap::create(std::string("\xFF\xFF\x00\x00" "abcd", 8)).ok());  // array past the end
    // Entries that point outside the array or at an unterminated string
    // are "no match".
    std::string blob("\x08\x00\x00\x00", 4);
    blob += std::string("\xFF\xFF\xFF\x7F\xFF\xFF\xFF\x7F", 8);
    blob += "xyz";  // no NUL
    auto m = CharsMap::create(blob);
    ASSERT_TRUE(m.ok()) << m.error();
    EXPECT_EQ(m->longest_prefix("abc").consumed, 0u);
    auto empty = CharsMap::create("");
    ASSERT_TRUE(empty.ok());
    EXPECT_EQ(empty->longest_prefix("abc").consumed, 0u);
}

}  // namespace
}  // namespace tessera
