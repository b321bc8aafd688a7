// Every pre-tokenizer family against Hugging Face `tokenizers`: one small
// byte-level BPE vocabulary, 1,000 strings, and per family the ids HF gives
// with the family's own regex chain (tests/golden/tokenizer_families/, from
// tools/gen_tokenizer_families_golden.py). Each tokenizer.ggml.pre name the
// golden lists for a family is checked, so the name table is tested too.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tokenizer/pre_families.h"
#include "tokenizer/tokenizer.h"

namespace tessera {
namespace {

const std::string kDir = TESSERA_SOURCE_DIR "/tests/golden/tokenizer_families/";

struct Golden {
    std::vector<std::string> tokens;
    std::vector<std::string> merges;
    std::vector<std::string> corpus;
};

const Golden& golden() {
    static const Golden g = [] {
        Golden out;
        std::ifstream vf(kDir + "vocab.json");
        const auto v = nlohmann::json::parse(vf);
        out.tokens = v.at("tokens").get<std::vector<std::string>>();
        out.merges = v.at("merges").get<std::vector<std::string>>();
        std::ifstream cf(kDir + "corpus.jsonl");
        for (std::string line; std::getline(cf, line);) out.corpus.push_back(nlohmann::json::parse(line));
        return out;
    }();
    return g;
}

Expected<Tokenizer> make_tokenizer(const std::string& pre) {
    VocabSpec spec;
    spec.kind = VocabKind::Bpe;
    spec.pre = pre;
    spec.tokens = golden().tokens;
    spec.merges = golden().merges;
    auto vocab = Vocab::create(std::move(spec));
    if (!vocab) return vocab.status();
    return Tokenizer::from_vocab(std::move(*vocab));
}

std::vector<std::string> family_files() {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(kDir)) {
        const std::string file = e.path().filename().string();
        if (file != "vocab.json" && e.path().extension() == ".json") names.push_back(e.path().stem().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

class Family : public ::testing::TestWithParam<std::string> {};

TEST_P(Family, EveryNameMatchesHuggingFace) {
    std::ifstream f(kDir + GetParam() + ".json");
    std::string line;
    ASSERT_TRUE(std::getline(f, line));
    const auto names = nlohmann::json::parse(line).at("names").get<std::vector<std::string>>();
    std::vector<std::vector<int32_t>> expected;
    while (std::getline(f, line)) expected.push_back(nlohmann::json::parse(line).get<std::vector<int32_t>>());
    const auto& corpus = golden().corpus;
    ASSERT_EQ(expected.size(), corpus.size());
    ASSERT_GE(corpus.size(), 1000u);
    ASSERT_FALSE(names.empty());
    for (const std::string& name : names) {
        auto tok = make_tokenizer(name);
        ASSERT_TRUE(tok.ok()) << name << ": " << tok.error();
        size_t mismatches = 0;
        for (size_t i = 0; i < corpus.size(); ++i) {
            const auto ids = tok->encode(corpus[i], {});
            if (ids != expected[i] && ++mismatches <= 3) {
                ADD_FAILURE() << name << " text: " << nlohmann::json(corpus[i]).dump()
                              << "\n  got:      " << nlohmann::json(ids).dump()
                              << "\n  expected: " << nlohmann::json(expected[i]).dump();
            }
            ASSERT_EQ(tok->decode(ids), corpus[i]) << name;
        }
        EXPECT_EQ(mismatches, 0u) << name << ": of " << corpus.size();
    }
}

INSTANTIATE_TEST_SUITE_P(HfTokenizers, Family, ::testing::ValuesIn(family_files()), [](const auto& info) {
    std::string name = info.param;
    for (char& c : name) c = (c == '-' || c == '.') ? '_' : c;
    return name;
});

// Every byte-level name the table accepts has a golden, so none goes
// untested (the raw-UTF-8 family, gemma4, is checked by llama.cpp's gemma-4
// suite in tokenizer_vocab_suite_test.cpp).
TEST(FamilyTable, EveryKnownNameHasAGolden) {
    std::vector<std::string> golden_names;
    for (const std::string& family : family_files()) {
        std::ifstream f(kDir + family + ".json");
        std::string line;
        ASSERT_TRUE(std::getline(f, line));
        const auto names = nlohmann::json::parse(line).at("names").get<std::vector<std::string>>();
        golden_names.insert(golden_names.end(), names.begin(), names.end());
    }
    ASSERT_GE(family_files().size(), 30u);
    for (std::string_view name : known_pre_names()) {
        if (!find_pre_family(name)->byte_level) continue;
        EXPECT_NE(std::find(golden_names.begin(), golden_names.end(), name), golden_names.end()) << name;
    }
}

TEST(FamilyTable, UnknownNameIsAClearError) {
    auto tok = make_tokenizer("no-such-family");
    ASSERT_FALSE(tok.ok());
    EXPECT_NE(tok.error().find("unknown pre-tokenizer"), std::string::npos) << tok.error();
    EXPECT_NE(tok.error().find("no-such-family"), std::string::npos) << tok.error();
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// Gemma 4's family: spaces as U+2581, merges over raw UTF-8, a newline run
// that is a token kept whole, and <0xXX> tokens for a character with none.
TEST(FamilyTable, RawUtf8BpeWithByteFallback) {
    VocabSpec s;
    s.kind = VocabKind::Bpe;
    s.pre = "gemma4";
    s.tokens = {"<unk>", "<0xF0>", "<0x9F>", "<0x98>", "<0x80>", "\xE2\x96\x81", "a", "b", "\xE2\x96\x81" "a", "ab",
                "\n", "\n\n"};
    s.types = {2, 6, 6, 6, 6, 1, 1, 1, 1, 1, 1, 1};
    s.merges = {"\xE2\x96\x81 a", "a b"};
    auto v = Vocab::create(s);
    ASSERT_TRUE(v.ok()) << v.error();
    auto t = Tokenizer::from_vocab(std::move(*v));
    ASSERT_TRUE(t.ok()) << t.error();
    const std::string text = "a ab\n\n\xF0\x9F\x98\x80";
    const auto ids = t->encode(text, {});
    EXPECT_EQ(ids, (std::vector<int32_t>{6, 8, 7, 11, 1, 2, 3, 4}));
    EXPECT_EQ(t->decode(ids), text);
    EXPECT_EQ(t->max_token_bytes(), 0u);
}

}  // namespace
}  // namespace tessera
