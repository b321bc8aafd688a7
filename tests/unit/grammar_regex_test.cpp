// Regexes against Python's `re` (tests/golden/grammar/regex_cases.json, made
// by tools/gen_regex_golden.py): for every pattern and string, compile_regex
// accepts the string iff re.fullmatch does; the search reading (JSON Schema
// `pattern`) iff re.search does; and a JSON Schema string with that pattern
// accepts the string's JSON text iff re.search does. Plus the refusals.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <memory>
#include <string>

#include "grammar/gbnf.h"
#include "grammar/json_schema.h"
#include "grammar/matcher.h"
#include "grammar/regex.h"

namespace tessera {
namespace {

const char* kGolden = TESSERA_SOURCE_DIR "/tests/golden/grammar/regex_cases.json";

bool matches(const std::shared_ptr<const Grammar>& g, const std::string& s) {
    GrammarMatcher m(g);
    return m.advance(std::string_view(s)) && m.accepting();
}

std::shared_ptr<const Grammar> shared(Expected<Grammar> g, const std::string& what) {
    EXPECT_TRUE(g.ok()) << what << ": " << g.error();
    return g.ok() ? std::make_shared<const Grammar>(std::move(*g)) : nullptr;
}

TEST(GrammarRegex, MatchesPythonRe) {
    std::ifstream f(kGolden);
    ASSERT_TRUE(f) << "cannot read " << kGolden;
    const auto golden = nlohmann::json::parse(f);
    size_t n_checked = 0;
    for (const auto& c : golden.at("cases")) {
        const std::string pattern = c.at("pattern").get<std::string>();
        const auto full = shared(compile_regex(pattern), pattern);
        auto search_text = regex_to_gbnf(pattern, "root", {.search = true});
        ASSERT_TRUE(search_text.ok()) << pattern << ": " << search_text.error();
        const auto search = shared(parse_gbnf(*search_text), pattern);
        const nlohmann::json schema = {{"type", "string"}, {"pattern", pattern}};
        const auto in_json = shared(compile_json_schema(schema.dump()), pattern);
        ASSERT_TRUE(full && search && in_json);
        for (const auto& t : c.at("strings")) {
            const std::string s = t.at("s").get<std::string>();
            EXPECT_EQ(matches(full, s), t.at("full").get<bool>()) << "fullmatch /" << pattern << "/ on '" << s << "'";
            if (t.at("search").is_null()) continue;
            const bool want = t.at("search").get<bool>();
            EXPECT_EQ(matches(search, s), want) << "search /" << pattern << "/ on '" << s << "'";
            EXPECT_EQ(matches(in_json, t.at("json").get<std::string>()), want)
                << "schema pattern /" << pattern << "/ on " << t.at("json").get<std::string>();
            ++n_checked;
        }
    }
    EXPECT_GT(n_checked, 500u);
}

TEST(GrammarRegex, RefusesWhatItDoesNotSupport) {
    const std::pair<const char*, const char*> cases[] = {
        {"(a)\\1", "backreference '\\1' is not supported at offset 3"},
        {"a(?=b)", "lookahead '(?=' is not supported at offset 1"},
        {"a(?!b)", "lookahead '(?!' is not supported at offset 1"},
        {"(?<=a)b", "lookbehind '(?<=' is not supported at offset 0"},
        {"\\bword", "word boundary '\\b' is not supported at offset 0"},
        {"a^b", "anchor '^' inside the pattern"},
        {"a$b", "anchor '$' inside the pattern"},
        {"(ab", "missing ')'"},
        {"ab)", "unmatched ')' at offset 2"},
        {"[ab", "unterminated character class at offset 0"},
        {"[z-a]", "range out of order"},
        {"*a", "nothing to repeat at offset 0"},
        {"a**", "nothing to repeat"},
        {"a{3,1}", "repetition bounds out of order"},
        {"a{99999}", "repetition bound above"},
        {"\\q", "unknown escape '\\q'"},
        {"\\x4", "malformed '\\x' escape"},
        {"(?i)a", "group modifier"},
    };
    for (const auto& [pattern, want] : cases) {
        auto g = compile_regex(pattern);
        ASSERT_FALSE(g.ok()) << pattern;
        EXPECT_NE(g.error().find(want), std::string::npos) << pattern << ": " << g.error();
    }
    GrammarLimits tight;
    tight.max_nesting = 3;
    EXPECT_FALSE(compile_regex("((((a))))", tight).ok());
    EXPECT_TRUE(compile_regex("((a))", tight).ok());
}

TEST(GrammarRegex, SchemaFormats) {
    const std::pair<const char*, std::vector<std::pair<const char*, bool>>> cases[] = {
        {"date", {{"2024-02-29", true}, {"2024-13-01", false}, {"24-01-01", false}}},
        {"time", {{"23:59:60Z", true}, {"12:00:00.5+02:00", true}, {"24:00:00Z", false}, {"12:00:00", false}}},
        {"date-time", {{"2024-05-01T08:30:00Z", true}, {"2024-05-01 08:30:00Z", false}}},
        {"uuid", {{"123e4567-e89b-12d3-a456-426614174000", true}, {"123e4567e89b12d3a456426614174000", false}}},
        {"email", {{"first.last+tag@example.co.uk", true}, {"no-at.example.com", false}, {"a@b", false}}},
        {"uri", {{"https://example.com/a?b=c#d", true}, {"mailto:x@y.z", true}, {"no scheme", false}}},
    };
    for (const auto& [format, strings] : cases) {
        const nlohmann::json schema = {{"type", "string"}, {"format", format}};
        const auto g = shared(compile_json_schema(schema.dump()), format);
        ASSERT_NE(g, nullptr);
        for (const auto& [s, want] : strings) {
            EXPECT_EQ(matches(g, nlohmann::json(s).dump()), want) << format << " on " << s;
        }
    }
    auto bad = compile_json_schema(R"({"type":"string","format":"ipv9"})");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().find("format 'ipv9'"), std::string::npos) << bad.error();
    auto bad_regex = compile_json_schema(R"j({"type":"object","properties":{"a":{"type":"string","pattern":"(?=x)"}}})j");
    ASSERT_FALSE(bad_regex.ok());
    EXPECT_NE(bad_regex.error().find("#/properties/a"), std::string::npos) << bad_regex.error();
    EXPECT_NE(bad_regex.error().find("lookahead"), std::string::npos) << bad_regex.error();
    EXPECT_FALSE(compile_json_schema(R"({"type":"integer","pattern":"1"})").ok());
}

}  // namespace
}  // namespace tessera
