// server/cache_control.h: cache_control markers become the request's cache
// pin (how many prompt tokens, for how long), and malformed markers are 400s
// naming the field.
#include "server/cache_control.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

using std::chrono::seconds;

TEST(CacheControl, MarkerTtlForms) {
    const CacheControlOptions o;  // default 300 s, max 3600 s
    seconds ttl{0};
    EXPECT_FALSE(read_cache_marker(Json{{"type", "ephemeral"}}, o, "cache_control", ttl));
    EXPECT_EQ(ttl, seconds(300));
    EXPECT_FALSE(read_cache_marker(Json{{"type", "ephemeral"}, {"ttl", "1h"}}, o, "cache_control", ttl));
    EXPECT_EQ(ttl, seconds(3600));
    EXPECT_FALSE(read_cache_marker(Json{{"type", "ephemeral"}, {"ttl", "90s"}}, o, "cache_control", ttl));
    EXPECT_EQ(ttl, seconds(90));
    EXPECT_FALSE(read_cache_marker(Json{{"type", "ephemeral"}, {"ttl", 42}}, o, "cache_control", ttl));
    EXPECT_EQ(ttl, seconds(42));
}

TEST(CacheControl, BadMarkersAre400sNamingTheField) {
    const CacheControlOptions o;
    seconds ttl{0};
    for (const Json& bad : {Json("ephemeral"), Json{{"type", "persistent"}}, Json::object(),
                            Json{{"type", "ephemeral"}, {"ttl", "5d"}}, Json{{"type", "ephemeral"}, {"ttl", "m"}},
                            Json{{"type", "ephemeral"}, {"ttl", -3}}, Json{{"type", "ephemeral"}, {"ttl", 1.5}},
                            Json{{"type", "ephemeral"}, {"ttl", "2h"}}}) {
        const auto err = read_cache_marker(bad, o, "messages[2].cache_control", ttl);
        ASSERT_TRUE(err) << bad.dump();
        EXPECT_EQ(err->http_status, 400);
        EXPECT_EQ(err->param, "messages[2].cache_control");
    }
    const auto over = read_cache_marker(Json{{"type", "ephemeral"}, {"ttl", "2h"}}, o, "cache_control", ttl);
    EXPECT_NE(over->message.find("3600"), std::string::npos) << over->message;
}

TEST(CacheControl, TheLastMarkedMessageAndTheLongestTtlWin) {
    const Json body = {{"messages",
                        {{{"role", "system"}, {"content", "s"}, {"cache_control", {{"type", "ephemeral"}}}},
                         {{"role", "user"},
                          {"content", {{{"type", "text"}, {"text", "u"}, {"cache_control", {{"type", "ephemeral"}, {"ttl", "1h"}}}}}}},
                         {{"role", "assistant"}, {"content", "a"}},
                         {{"role", "user"}, {"content", "q"}}}}};
    CacheMark mark;
    ASSERT_FALSE(find_cache_marks(body, CacheControlOptions{}, mark));
    EXPECT_FALSE(mark.whole_prompt);
    EXPECT_EQ(mark.last_message, 1);
    EXPECT_EQ(mark.ttl, seconds(3600));
}

TEST(CacheControl, RequestLevelMarkerKeepsTheWholePrompt) {
    CacheMark mark;
    ASSERT_FALSE(find_cache_marks(Json{{"prompt", "x"}, {"cache_control", {{"type", "ephemeral"}}}}, {}, mark));
    EXPECT_TRUE(mark.whole_prompt);
    EXPECT_EQ(mark.ttl, seconds(300));
    CacheMark none;
    ASSERT_FALSE(find_cache_marks(Json{{"prompt", "x"}}, {}, none));
    EXPECT_FALSE(none.any());
}

TEST(CacheControl, SystemPromptOptionMarksTheLeadingSystemMessages) {
    CacheControlOptions o;
    o.system_prompt_ttl = seconds(600);
    const Json body = {{"messages",
                        {{{"role", "system"}, {"content", "a"}},
                         {{"role", "developer"}, {"content", "b"}},
                         {{"role", "user"}, {"content", "c"}},
                         {{"role", "system"}, {"content", "d"}}}}};
    CacheMark mark;
    ASSERT_FALSE(find_cache_marks(body, o, mark));
    EXPECT_EQ(mark.last_message, 1);
    EXPECT_EQ(mark.ttl, seconds(600));
    CacheMark user_first;
    ASSERT_FALSE(find_cache_marks(Json{{"messages", {{{"role", "user"}, {"content", "c"}}}}}, o, user_first));
    EXPECT_FALSE(user_first.any());
}

}  // namespace
}  // namespace tessera
