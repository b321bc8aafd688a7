// Token mask time per step on the golden corpus's random walks
// (tests/golden/grammar/*.jsonl: GBNF grammars, regexes and JSON Schemas walked on
// SmolLM2's vocabulary), each walk replayed with a fresh per-sequence
// TokenMaskCache, as a server sequence would. bench/grammar_mask_llguidance.py
// replays the same walks through llguidance for the side-by-side numbers.
//
// Two passes over the corpus, each with new tables: "lazy" (a position's
// table is built when a mask first needs it, inside that mask's time) and
// "prebuilt" (TokenMaskTables::build_all first, as xgrammar does at compile
// time; its total time is printed, per grammar with --each). Prints median,
// p99, mean and max per pass, in microseconds, over all masks and over the
// per-sequence cache's misses alone.
//
//   build/grammar_mask_bench models/SmolLM2-135M-Instruct.Q4_1.gguf
//       tests/golden/grammar/smollm2_gbnf_masks.jsonl [--each]
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
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

struct Walk {
    std::string label;
    std::string grammar_id;  // walks of one grammar share its tables
    std::shared_ptr<const Grammar> grammar;
    std::vector<int32_t> tokens;
    size_t n_masks = 0;
};

struct Stats {
    double median = 0, p99 = 0, mean = 0, max = 0;
};

Stats stats(std::vector<double> us) {
    Stats s;
    if (us.empty()) return s;
    std::sort(us.begin(), us.end());
    s.median = us[us.size() / 2];
    s.p99 = us[std::min(us.size() - 1, us.size() * 99 / 100)];
    for (double v : us) s.mean += v;
    s.mean /= static_cast<double>(us.size());
    s.max = us.back();
    return s;
}

void print(const char* what, const std::vector<double>& us) {
    const Stats s = stats(us);
    std::printf("%-28s masks %5zu  median %9.1f us  p99 %9.1f us  mean %9.1f us  max %9.1f us\n", what, us.size(),
                s.median, s.p99, s.mean, s.max);
}

// One walk's mask times in microseconds; the walk's tokens must be accepted.
// `misses`: the times of the masks the per-sequence cache did not have.
bool replay(const Walk& w, const TokenVocabulary& vocab, TokenMaskTables& tables, std::vector<double>& us,
            std::vector<double>& misses) {
    GrammarMatcher m(w.grammar);
    TokenMaskCache cache;
    TokenMask mask;
    for (size_t step = 0; step < w.n_masks; ++step) {
        const auto t0 = std::chrono::steady_clock::now();
        const size_t missed = cache.misses();
        cache.compute(m, tables, mask);
        us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        if (cache.misses() != missed) misses.push_back(us.back());
        if (step >= w.tokens.size()) break;
        const int32_t t = w.tokens[step];
        if (!mask_has(mask, t) || !m.advance(std::string_view(vocab.bytes(t)))) {
            std::fprintf(stderr, "%s: step %zu: token %d not allowed\n", w.label.c_str(), step, t);
            return false;
        }
    }
    return true;
}

int run(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s MODEL.gguf GOLDEN.jsonl [--each]\n", argv[0]);
        return 2;
    }
    const bool each = argc > 3 && std::string(argv[3]) == "--each";
    auto gguf = GgufFile::open(argv[1]);
    if (!gguf.ok()) return std::fprintf(stderr, "%s\n", gguf.error().c_str()), 1;
    auto tok = Tokenizer::from_gguf(*gguf);
    if (!tok.ok()) return std::fprintf(stderr, "%s\n", tok.error().c_str()), 1;
    const TokenVocabulary vocab = TokenVocabulary::from_tokenizer(*tok);

    std::ifstream f(argv[2]);
    std::string line;
    if (!std::getline(f, line)) return std::fprintf(stderr, "cannot read %s\n", argv[2]), 1;
    std::vector<Walk> walks;
    std::map<std::string, std::shared_ptr<const Grammar>> grammars;  // by source text
    while (std::getline(f, line)) {
        const auto c = nlohmann::json::parse(line);
        Walk w;
        w.label = c.at("name").get<std::string>() + " seed " + std::to_string(c.at("seed").get<int>());
        const char* kind = c.contains("schema") ? "schema" : c.contains("regex") ? "regex" : "gbnf";
        w.grammar_id = std::string(kind) + ":" + c.at(kind).get<std::string>();
        auto& g = grammars[w.grammar_id];
        if (!g) {
            const std::string text = c.at(kind).get<std::string>();
            auto compiled = kind[0] == 's' ? compile_json_schema(text) : kind[0] == 'r' ? compile_regex(text) : parse_gbnf(text);
            if (!compiled.ok()) return std::fprintf(stderr, "%s: %s\n", w.label.c_str(), compiled.error().c_str()), 1;
            g = std::make_shared<const Grammar>(std::move(*compiled));
        }
        w.grammar = g;
        w.tokens = c.at("tokens").get<std::vector<int32_t>>();
        w.n_masks = c.at("masks").size();
        walks.push_back(std::move(w));
    }

    for (const bool prebuilt : {false, true}) {
        const char* pass = prebuilt ? "prebuilt" : "lazy";
        std::map<std::string, std::unique_ptr<TokenMaskTables>> tables;  // one per grammar, shared by its walks
        std::vector<double> all, all_misses;
        double build_ms = 0;
        for (const Walk& w : walks) {
            auto& t = tables[w.grammar_id];
            if (!t) {
                t = std::make_unique<TokenMaskTables>(w.grammar, vocab);
                if (prebuilt) {
                    const auto t0 = std::chrono::steady_clock::now();
                    t->build_all();
                    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
                    build_ms += ms;
                    if (each) std::printf("build_all %-18s %4zu positions %4zu tables %9.1f ms\n", w.label.c_str(), t->n_built(), t->n_tables(), ms);
                }
            }
            std::vector<double> us, misses;
            if (!replay(w, vocab, *t, us, misses)) return 1;
            if (each) print((std::string(pass) + " " + w.label).c_str(), us);
            all.insert(all.end(), us.begin(), us.end());
            all_misses.insert(all_misses.end(), misses.begin(), misses.end());
        }
        print((std::string("tessera ") + pass).c_str(), all);
        print((std::string("tessera ") + pass + " misses").c_str(), all_misses);
        if (prebuilt) std::printf("build_all, all %zu grammars: %.0f ms\n", tables.size(), build_ms);
    }
    return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::run(argc, argv); }
