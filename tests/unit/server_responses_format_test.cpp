// The Responses API's text.format as the chat body's response_format
// (server/responses_api.h): text asks for nothing, json_object and
// json_schema map onto chat's shapes, anything else is a 400 naming the field.
#include <gtest/gtest.h>

#include <string>

#include "server/responses_api.h"

namespace tessera {
namespace {

Json body_with_format(const std::string& format) {
    return *parse_json(R"({"input": "Hi", "text": {"format": )" + format + "}}");
}

TEST(ResponsesTextFormat, MapsOntoResponseFormat) {
    Json chat;
    ASSERT_FALSE(responses_to_chat_body(body_with_format(R"({"type": "text"})"), chat));
    EXPECT_FALSE(chat.contains("response_format"));
    ASSERT_FALSE(responses_to_chat_body(body_with_format(R"({"type": "json_object"})"), chat));
    EXPECT_EQ(chat["response_format"], *parse_json(R"({"type": "json_object"})"));
    const Json schema_body = body_with_format(
        R"({"type": "json_schema", "name": "city", "strict": true, "schema": {"type": "object"}})");
    ASSERT_FALSE(responses_to_chat_body(schema_body, chat));
    EXPECT_EQ(chat["response_format"],
              *parse_json(R"({"type": "json_schema", "json_schema": {"schema": {"type": "object"}, "name": "city",
                              "strict": true}})"));
    // The response echoes the format as sent.
    EXPECT_EQ(responses_echo(schema_body).text_format["name"], "city");
    EXPECT_EQ(responses_echo(*parse_json(R"({"input": "Hi"})")).text_format, *parse_json(R"({"type": "text"})"));
}

TEST(ResponsesTextFormat, BadFormatsAreFourHundreds) {
    const std::pair<std::string, std::string> cases[] = {
        {R"({"type": "xml"})", "text.format.type"},
        {R"({"name": "x"})", "text.format.type"},
        {R"("json_object")", "text.format.type"},
        {R"({"type": "json_schema", "name": "x"})", "text.format.schema"},
        {R"({"type": "json_schema", "schema": [1]})", "text.format.schema"},
    };
    for (const auto& [format, param] : cases) {
        Json chat;
        auto err = responses_to_chat_body(body_with_format(format), chat);
        ASSERT_TRUE(err) << format;
        EXPECT_EQ(err->http_status, 400);
        EXPECT_EQ(err->param, param) << format;
    }
    Json chat;
    auto err = responses_to_chat_body(*parse_json(R"({"input": "Hi", "text": 3})"), chat);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->param, "text");
}

}  // namespace
}  // namespace tessera
