// tessera's token masks against llguidance's on SmolLM2's vocabulary
// (tests/golden/grammar/, made by tools/gen_grammar_golden.py; GBNF grammars,
// regexes and compact JSON Schemas): the same
// random token walks replayed, every step's allowed set compared by size and
// hash (and id ranges where stored). Needs TESSERA_MODEL for the vocabulary.
//
// One documented difference: where the grammar forces a run of bytes (a
// literal with no alternative), llguidance allows only the canonical
// tokenization of the forced bytes (its "forced tokens"), so its mask there
// has one token. tessera allows every token that is a prefix of the forced
// bytes, as plain masked decoding does (jump-forward, later, will pick the
// canonical tokens). At such steps the test checks that the oracle's token is
// among tessera's, counts them, and holds the mask (made from the token
// tables) to the plain vocabulary walk, as at the listed differences below.
//
// The schema corpus (tests/golden/grammar/schema_corpus.json) is walked the
// same way, its formats given to the oracle as tessera's own regexes (see
// tools/gen_grammar_golden.py). One more difference is listed below
// (kKnownDifferences): inside an additional property's key, llguidance
// admits every \uXXXX escape, elsewhere only those of control characters;
// tessera escapes every string alike.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "grammar/gbnf.h"
#include "grammar/json_schema.h"
#include "grammar/regex.h"
#include "grammar/token_mask.h"
#include "grammar/token_mask_tables.h"
#include "tokenizer/tokenizer.h"

namespace tessera {
namespace {

const char* kGolden = TESSERA_SOURCE_DIR "/tests/golden/grammar/smollm2_gbnf_masks.jsonl";
// The schema corpus (tools/gen_schema_corpus.py), walked with a bias to
// structural tokens so the walks leave strings and finish objects.
const char* kCorpusGolden = TESSERA_SOURCE_DIR "/tests/golden/grammar/smollm2_schema_corpus_masks.jsonl";

// Steps where the oracle's mask is larger by `extra` tokens, explained at the
// top of this file: after a backslash in an additional property's key, the
// oracle's 16 tokens of "u" and hex digits other than \u00[01]x and \u007f.
struct KnownDifference {
    const char* name;
    int seed;
    size_t step;
    size_t extra;
};
constexpr KnownDifference kKnownDifferences[] = {
    {"kw_additional_true", 0, 25, 16},
    {"kw_additional_true", 1, 8, 16},
};

const KnownDifference* known_difference(const std::string& name, int seed, size_t step) {
    for (const auto& d : kKnownDifferences) {
        if (name == d.name && seed == d.seed && step == d.step) return &d;
    }
    return nullptr;
}

// The hash the generator uses: FNV-1a 64 over the sorted ids as 4 LE bytes each.
std::string mask_hash(const std::vector<int32_t>& ids) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (int32_t id : ids) {
        for (int k = 0; k < 4; ++k) {
            h ^= (static_cast<uint32_t>(id) >> (8 * k)) & 0xFF;
            h *= 0x100000001B3ull;
        }
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

void expect_same_mask(const std::vector<int32_t>& ids, const nlohmann::json& want, const std::string& where) {
    EXPECT_EQ(ids.size(), want.at("n").get<size_t>()) << where;
    EXPECT_EQ(mask_hash(ids), want.at("h").get<std::string>()) << where;
    if (!want.contains("r")) return;
    std::vector<int32_t> expected;
    for (const auto& r : want.at("r")) {
        for (int32_t id = r[0].get<int32_t>(); id <= r[1].get<int32_t>(); ++id) expected.push_back(id);
    }
    EXPECT_EQ(ids, expected) << where;
}

// Replays the walks of one golden file; `min_cases`: how many it must hold.
// `sanitized_stride`: under ASan + UBSan (TESSERA_SANITIZED) only every n-th
// walk, since the corpus's 8000 masks take tens of seconds even in Release
// (lazy tables: a bounded string builds one per position); the Release run
// replays them all.
void replay_golden(const char* golden, size_t min_cases, size_t sanitized_stride = 1) {
    const size_t stride = std::getenv("TESSERA_SANITIZED") != nullptr ? sanitized_stride : 1;
    const char* path = std::getenv("TESSERA_MODEL");
    if (path == nullptr || *path == '\0') GTEST_SKIP() << "TESSERA_MODEL not set";
    auto gguf = GgufFile::open(path);
    ASSERT_TRUE(gguf.ok()) << gguf.error();
    auto tok = Tokenizer::from_gguf(*gguf);
    ASSERT_TRUE(tok.ok()) << tok.error();

    std::ifstream f(golden);
    std::string line;
    ASSERT_TRUE(std::getline(f, line)) << "cannot read " << golden;
    const auto meta = nlohmann::json::parse(line).at("meta");
    ASSERT_EQ(meta.at("n_vocab").get<int32_t>(), tok->n_vocab());
    std::vector<std::string> pieces;
    for (int32_t id = 0; id < tok->n_vocab(); ++id) pieces.push_back(tok->token_to_piece(id));
    const TokenVocabulary vocab(std::move(pieces), meta.at("eog").get<std::vector<int32_t>>());

    size_t n_cases = 0, n_masks = 0, n_forced = 0, n_known = 0, n_hits = 0;
    std::string last_source;  // a grammar's walks are consecutive and share its tables
    std::shared_ptr<const Grammar> grammar;
    std::unique_ptr<TokenMaskTables> tables;
    double seconds = 0;
    std::vector<double> times;
    size_t n_lines = 0;
    while (std::getline(f, line)) {
        if (n_lines++ % stride != 0) continue;
        const auto c = nlohmann::json::parse(line);
        const std::string name = c.at("name").get<std::string>();
        const int seed = c.at("seed").get<int>();
        const std::string label = name + " seed " + std::to_string(seed);
        const std::string source = c.contains("schema") ? c.at("schema").get<std::string>()
                                   : c.contains("regex") ? c.at("regex").get<std::string>()
                                                         : c.at("gbnf").get<std::string>();
        if (source != last_source) {
            auto g = c.contains("schema")  ? compile_json_schema(source)
                     : c.contains("regex") ? compile_regex(source)
                                           : parse_gbnf(source);
            ASSERT_TRUE(g.ok()) << label << ": " << g.error();
            grammar = std::make_shared<const Grammar>(std::move(*g));
            tables = std::make_unique<TokenMaskTables>(grammar, vocab);
            last_source = source;
        }
        GrammarMatcher m(grammar);
        const auto& tokens = c.at("tokens");
        const auto& masks = c.at("masks");
        TokenMask mask;
        TokenMaskCache cache;  // masks come through the cache, so the oracle checks it too
        for (size_t step = 0; step < masks.size(); ++step) {
            const auto t0 = std::chrono::steady_clock::now();
            cache.compute(m, *tables, mask);
            times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            seconds += times.back();
            std::vector<int32_t> ids;
            for (int32_t id = 0; id < vocab.n_tokens(); ++id) {
                if (mask_has(mask, id)) ids.push_back(id);
            }
            const auto& want = masks[step];
            ++n_masks;
            int next_bytes = 0;
            for (uint64_t w : m.allowed_bytes().bits) next_bytes += std::popcount(w);
            // Where the oracle's mask differs by design, the tables' mask is
            // held to the plain vocabulary walk instead, so every step is
            // checked token for token.
            const auto expect_plain_walk = [&] {
                TokenMask plain;
                compute_token_mask(m, vocab, plain);
                EXPECT_EQ(mask, plain) << label << " step " << step << ": tables and plain walk differ";
            };
            if (next_bytes == 1 && want.at("n").get<size_t>() == 1 && ids.size() > 1) {
                // Forced bytes: the oracle keeps only the canonical token.
                EXPECT_TRUE(mask_has(mask, want.at("r")[0][0].get<int32_t>())) << label << " step " << step;
                expect_plain_walk();
                ++n_forced;
            } else if (const KnownDifference* d = known_difference(name, seed, step)) {
                EXPECT_EQ(ids.size() + d->extra, want.at("n").get<size_t>()) << label << " step " << step;
                expect_plain_walk();
                ++n_known;
            } else {
                expect_same_mask(ids, want, label + " step " + std::to_string(step));
            }
            if (step < tokens.size()) {
                const std::string& bytes = vocab.bytes(tokens[step].get<int32_t>());
                ASSERT_TRUE(m.advance(std::string_view(bytes))) << label << " step " << step;
            }
        }
        ++n_cases;
        n_hits += cache.hits();
    }
    EXPECT_GE(n_cases, min_cases / stride);
    std::sort(times.begin(), times.end());
    std::printf("grammar golden: %zu walks, %zu masks, %zu equal to llguidance's, %zu forced steps and %zu listed "
                "differences (see top); %zu from the cache; per mask: mean %.0f us, median %.0f us, p99 %.0f us\n",
                n_cases, n_masks, n_masks - n_forced - n_known, n_forced, n_known, n_hits, seconds / static_cast<double>(n_masks) * 1e6,
                times[times.size() / 2] * 1e6, times[times.size() * 99 / 100] * 1e6);
}

TEST(GrammarGolden, MasksEqualLlguidance) { replay_golden(kGolden, 10); }

// At least 100 schemas, two walks each.
TEST(GrammarGolden, SchemaCorpusMasksEqualLlguidance) { replay_golden(kCorpusGolden, 200, 8); }

}  // namespace
}  // namespace tessera
