// WordPiece ("bert") against Hugging Face `tokenizers`: a trained vocabulary
// in GGUF spelling and 1,000 strings with HF's ids
// (tests/golden/tokenizer_wordpiece.jsonl, tools/gen_tokenizer_wordpiece_golden.py),
// plus the BERT normaliser's rules on their own.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace tessera {
namespace {

struct WpmGolden {
    VocabSpec spec;
    std::vector<std::pair<std::string, std::vector<int32_t>>> cases;
};

WpmGolden read_golden() {
    WpmGolden g;
    std::ifstream f(TESSERA_SOURCE_DIR "/tests/golden/tokenizer_wordpiece.jsonl");
    std::string line;
    if (!std::getline(f, line)) return g;
    const auto head = nlohmann::json::parse(line);
    g.spec.kind = VocabKind::Wpm;
    g.spec.tokens = head.at("tokens").get<std::vector<std::string>>();
    g.spec.types.assign(g.spec.tokens.size(), static_cast<int32_t>(TokenType::Normal));
    for (int32_t id : head.at("control").get<std::vector<int32_t>>()) {
        g.spec.types[static_cast<size_t>(id)] = static_cast<int32_t>(TokenType::Control);
    }
    g.spec.unk = head.at("unk").get<int32_t>();
    while (std::getline(f, line)) {
        const auto j = nlohmann::json::parse(line);
        g.cases.emplace_back(j.at("text").get<std::string>(), j.at("ids").get<std::vector<int32_t>>());
    }
    return g;
}

TEST(WordPiece, MatchesHuggingFace) {
    WpmGolden g = read_golden();
    ASSERT_GE(g.cases.size(), 1000u);
    auto vocab = Vocab::create(g.spec);
    ASSERT_TRUE(vocab.ok()) << vocab.error();
    auto tok = Tokenizer::from_vocab(std::move(*vocab));
    ASSERT_TRUE(tok.ok()) << tok.error();
    size_t mismatches = 0;
    for (const auto& [text, expected] : g.cases) {
        const auto ids = tok->encode(text, {});
        if (ids != expected && ++mismatches <= 5) {
            ADD_FAILURE() << "text: " << nlohmann::json(text).dump() << "\n  got:      " << nlohmann::json(ids).dump()
                          << "\n  expected: " << nlohmann::json(expected).dump();
        }
    }
    EXPECT_EQ(mismatches, 0u) << "of " << g.cases.size();
}

Tokenizer tiny(bool lowercase) {
    VocabSpec s;
    s.kind = VocabKind::Wpm;
    s.tokens = {"[UNK]", "\xE2\x96\x81hello", "\xE2\x96\x81he", "llo", "\xE2\x96\x81,", "\xE2\x96\x81" "cafe",
                "\xE2\x96\x81\xE4\xBD\xA0", "\xE2\x96\x81HELLO"};
    s.unk = 0;
    s.lowercase = lowercase;
    s.strip_accents = lowercase;
    auto v = Vocab::create(s);
    auto t = Tokenizer::from_vocab(std::move(*v));
    return std::move(*t);
}

TEST(WordPiece, NormaliserAndGreedyMatch) {
    const Tokenizer t = tiny(true);
    // Lowercased, accents stripped, punctuation and CJK split off, control dropped.
    EXPECT_EQ(t.encode("HeLLo,CAFÉ\x07\xE4\xBD\xA0", {}), (std::vector<int32_t>{1, 4, 5, 6}));
    // A word with an unmatched part becomes one unknown token.
    EXPECT_EQ(t.encode("hellox he", {}), (std::vector<int32_t>{0, 2}));
    EXPECT_EQ(t.decode(t.encode("hello", {})), " hello");
    // Without lowercasing the cased token matches.
    EXPECT_EQ(tiny(false).encode("HELLO", {}), (std::vector<int32_t>{7}));
    EXPECT_EQ(t.max_token_bytes(), 0u);
}

}  // namespace
}  // namespace tessera
