// libFuzzer target: arbitrary text as a GBNF grammar (or, when it starts
// with '{', as a JSON Schema; with '/', the rest as a regex) under tight
// limits; a grammar that compiles is then driven by the input's own bytes
// (advance, rollback) and asked for a token mask over a tiny vocabulary,
// whose answer must agree with feeding each token to a copy of the matcher;
// the context-independent tables (lazy and prebuilt) and the mask cache
// must agree with both.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "grammar/gbnf.h"
#include "grammar/json_schema.h"
#include "grammar/regex.h"
#include "grammar/token_mask.h"
#include "grammar/token_mask_tables.h"

namespace {

tessera::GrammarLimits tight_limits() {
    tessera::GrammarLimits l;
    l.max_source_bytes = 8 << 10;
    l.max_rules = 2000;
    l.max_symbols = 20000;
    l.max_nesting = 20;
    l.max_repetition = 100;
    return l;
}

const tessera::TokenVocabulary& vocabulary() {
    static const tessera::TokenVocabulary v({"", "a", "ab", "{", "\"", "\"}", "1", "12", " ", "\n", "\xC3\xA9", "\xC3", "x"},
                                            {0});
    return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto g = (size > 0 && data[0] == '{')   ? tessera::compile_json_schema(text, tight_limits())
             : (size > 0 && data[0] == '/') ? tessera::compile_regex(text.substr(1), tight_limits())
                                            : tessera::parse_gbnf(text, tight_limits());
    if (!g) return 0;
    const auto grammar = std::make_shared<const tessera::Grammar>(std::move(*g));
    tessera::GrammarMatcher m(grammar);
    // Drive the matcher with the input's bytes (up to 64 of them).
    for (size_t i = 0; i < size && i < 64; ++i) {
        if (!m.advance(data[i])) break;
    }
    if (m.n_bytes() > 0 && (data[0] & 1)) m.rollback(1);
    tessera::TokenMask mask;
    const size_t before = m.n_bytes();
    tessera::compute_token_mask(m, vocabulary(), mask);
    if (m.n_bytes() != before) std::abort();  // the walk must leave the state as it was
    for (int32_t id = 1; id < vocabulary().n_tokens(); ++id) {
        tessera::GrammarMatcher copy = m;
        if (copy.advance(std::string_view(vocabulary().bytes(id))) != tessera::mask_has(mask, id)) std::abort();
    }
    if (tessera::mask_has(mask, 0) != m.accepting()) std::abort();
    tessera::TokenMaskTables lazy(grammar, vocabulary()), prebuilt(grammar, vocabulary());
    prebuilt.build_all();
    tessera::TokenMask from_tables;
    lazy.compute(m, from_tables);
    if (from_tables != mask) std::abort();
    prebuilt.compute(m, from_tables);
    if (from_tables != mask) std::abort();
    // The cache must give the same mask, also after a rollback and a different byte.
    tessera::TokenMaskCache cache;
    tessera::TokenMask cached;
    cache.compute(m, vocabulary(), cached);
    if (cached != mask) std::abort();
    if (m.n_bytes() > 0) {
        m.rollback(1);
        for (int b = 0; b < 256; ++b) {
            if (m.advance(static_cast<uint8_t>(b))) break;
        }
        tessera::compute_token_mask(m, vocabulary(), mask);
        cache.compute(m, vocabulary(), cached);
        if (cached != mask) std::abort();
    }
    return 0;
}
