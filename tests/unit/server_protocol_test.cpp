// Unit tests for OpenAI request parsing: every field reaches GenerationRequest,
// and every limit, wrong type and malformed body becomes a 400 that names the
// offending field. Uses a tiny byte-level vocabulary and the ChatML template.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "server/field_reader.h"
#include "server/openai_request.h"
#include "template/chat_render.h"
#include "tokenizer/tokenizer.h"

namespace tessera {
namespace {

constexpr int32_t kImStart = 256;
constexpr int32_t kImEnd = 257;
constexpr int32_t kVocab = 259;

// 256 single-byte tokens, ChatML's two control tokens and one merge ("ab").
Tokenizer tiny_tokenizer() {
    ByteLevelMap map;
    VocabSpec s;
    s.kind = VocabKind::Bpe;
    s.pre = "gpt-2";
    for (int b = 0; b < 256; ++b) s.tokens.push_back(map.byte_text(static_cast<uint8_t>(b)));
    s.tokens.push_back("<|im_start|>");
    s.tokens.push_back("<|im_end|>");
    s.types.assign(256, static_cast<int32_t>(TokenType::Normal));
    s.types.push_back(static_cast<int32_t>(TokenType::Control));
    s.types.push_back(static_cast<int32_t>(TokenType::Control));
    s.tokens.push_back("ab");
    s.types.push_back(static_cast<int32_t>(TokenType::Normal));
    s.merges.push_back("a b");
    s.eos = kImEnd;
    auto vocab = Vocab::create(std::move(s));
    EXPECT_TRUE(vocab.ok()) << vocab.error();
    auto tok = Tokenizer::from_vocab(std::move(*vocab));
    EXPECT_TRUE(tok.ok()) << tok.error();
    return std::move(*tok);
}

class ServerProtocol : public ::testing::Test {
protected:
    ServerProtocol() : tok_(tiny_tokenizer()), template_(chatml_template(), "", "") {
        ctx_.tokenizer = &tok_;
        ctx_.chat_template = &template_;
        ctx_.max_context = 512;
    }

    std::optional<ApiError> chat(const Json& body, ParsedRequest& out) const {
        return parse_chat_request(body, ctx_, limits_, out);
    }
    std::optional<ApiError> completion(const Json& body, ParsedRequest& out) const {
        return parse_completion_request(body, ctx_, limits_, out);
    }
    // The request must fail with a 400 naming `param`.
    void expect_chat_error(Json extra, const std::string& param) const {
        Json body = {{"messages", {{{"role", "user"}, {"content", "hi"}}}}};
        for (auto& [k, v] : extra.items()) body[k] = v;
        ParsedRequest out;
        auto err = chat(body, out);
        ASSERT_TRUE(err.has_value()) << body.dump();
        EXPECT_EQ(err->http_status, 400) << body.dump();
        EXPECT_EQ(err->param, param) << body.dump() << " -> " << err->message;
        EXPECT_EQ(err->type, "invalid_request_error");
        EXPECT_FALSE(err->message.empty());
    }
    void expect_completion_error(Json body, const std::string& param) const {
        ParsedRequest out;
        auto err = completion(body, out);
        ASSERT_TRUE(err.has_value()) << body.dump();
        EXPECT_EQ(err->http_status, 400);
        EXPECT_EQ(err->param, param) << body.dump() << " -> " << err->message;
    }

    Tokenizer tok_;
    ChatTemplate template_;
    PromptContext ctx_;
    ProtocolLimits limits_;
};

TEST_F(ServerProtocol, AGrammarCacheSharesConstraintsAcrossRequests) {
    GrammarCache cache(std::make_shared<const TokenVocabulary>(TokenVocabulary::from_tokenizer(tok_)), size_t{1} << 20);
    ctx_.grammars = &cache;
    const auto constraint = [&](const std::string& extra) {
        ParsedRequest out;
        auto body = parse_json(R"({"messages":[{"role":"user","content":"hi"}])" + extra + "}");
        EXPECT_TRUE(body.has_value()) << extra;
        auto err = chat(body.value_or(Json::object()), out);
        EXPECT_FALSE(err) << (err ? err->message : "");
        EXPECT_NE(out.gen.constraint.tables, nullptr) << extra;
        return out.gen.constraint;
    };
    const std::string tools = R"(,"tools":[{"type":"function","function":{"name":"get_time","parameters":)"
                              R"({"type":"object","properties":{"zone":{"type":"string"}}}}}])";
    const auto required = constraint(tools + R"(,"tool_choice":"required")");
    EXPECT_EQ(constraint(tools + R"(,"tool_choice":"required")").grammar, required.grammar);
    const auto named = constraint(tools + R"(,"tool_choice":{"type":"function","function":{"name":"get_time"}})");
    EXPECT_NE(named.grammar, required.grammar);
    const auto object = constraint(R"(,"response_format":{"type":"json_object"})");
    const auto again = constraint(R"(,"response_format":{"type":"json_object"})");
    EXPECT_EQ(again.grammar, object.grammar);
    EXPECT_EQ(again.tables, object.tables);
    EXPECT_NE(object.grammar, required.grammar);
    EXPECT_EQ(cache.size(), 3u);
    EXPECT_EQ(cache.hits(), 2u);
}

TEST_F(ServerProtocol, ChatRendersTemplateAndAppliesOpenAiDefaults) {
    ParsedRequest out;
    auto err = chat({{"model", "m"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}}, out);
    ASSERT_FALSE(err) << err->message;
    EXPECT_EQ(out.kind, ApiKind::Chat);
    EXPECT_EQ(out.model, "m");
    const std::string text = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n";
    EXPECT_EQ(out.gen.prompt, tok_.encode(text, {.parse_special = true}));
    EXPECT_EQ(out.gen.prompt.front(), kImStart);
    EXPECT_FLOAT_EQ(out.gen.sampling.temperature, 1.0f);
    EXPECT_FLOAT_EQ(out.gen.sampling.top_p, 1.0f);
    EXPECT_EQ(out.gen.sampling.top_k, 0);
    EXPECT_FLOAT_EQ(out.gen.sampling.min_p, 0.0f);
    EXPECT_EQ(out.gen.n, 1);
    EXPECT_EQ(out.gen.top_logprobs, -1);
    EXPECT_FALSE(out.stream);
    EXPECT_FALSE(out.seed_given);
    EXPECT_EQ(out.gen.max_tokens, 512 - static_cast<int32_t>(out.gen.prompt.size()));
}

TEST_F(ServerProtocol, ChatWithoutGenerationPromptEndsAfterLastMessage) {
    ParsedRequest out;
    ASSERT_FALSE(chat({{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"add_generation_prompt", false}}, out));
    EXPECT_EQ(out.gen.prompt, tok_.encode("<|im_start|>user\nhi<|im_end|>\n", {.parse_special = true}));
}

TEST_F(ServerProtocol, EveryFieldReachesTheGenerationRequest) {
    const Json body = {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                       {"temperature", 0.5},
                       {"top_p", 0.9},
                       {"top_k", 7},
                       {"min_p", 0.1},
                       {"presence_penalty", 0.5},
                       {"frequency_penalty", -0.5},
                       {"repetition_penalty", 1.1},
                       {"seed", 42},
                       {"n", 3},
                       {"stop", {"a", "bc"}},
                       {"logit_bias", {{"65", -100}, {"66", 2.5}}},
                       {"logprobs", true},
                       {"top_logprobs", 5},
                       {"ignore_eos", true},
                       {"stream", true},
                       {"stream_options", {{"include_usage", true}}},
                       {"max_tokens", 10}};
    ParsedRequest out;
    auto err = chat(body, out);
    ASSERT_FALSE(err) << err->message;
    const SamplingParams& s = out.gen.sampling;
    EXPECT_FLOAT_EQ(s.temperature, 0.5f);
    EXPECT_FLOAT_EQ(s.top_p, 0.9f);
    EXPECT_EQ(s.top_k, 7);
    EXPECT_FLOAT_EQ(s.min_p, 0.1f);
    EXPECT_FLOAT_EQ(s.presence_penalty, 0.5f);
    EXPECT_FLOAT_EQ(s.frequency_penalty, -0.5f);
    EXPECT_FLOAT_EQ(s.repeat_penalty, 1.1f);
    EXPECT_EQ(s.seed, 42u);
    EXPECT_TRUE(out.seed_given);
    EXPECT_EQ(out.gen.n, 3);
    EXPECT_EQ(out.gen.stop, (std::vector<std::string>{"a", "bc"}));
    ASSERT_EQ(s.logit_bias.size(), 2u);
    EXPECT_EQ(s.logit_bias[0], (std::pair<int32_t, float>{65, -100.0f}));
    EXPECT_EQ(s.logit_bias[1], (std::pair<int32_t, float>{66, 2.5f}));
    EXPECT_EQ(out.gen.top_logprobs, 5);
    EXPECT_TRUE(out.gen.ignore_eos);
    EXPECT_TRUE(out.stream);
    EXPECT_TRUE(out.include_usage);
    EXPECT_EQ(out.gen.max_tokens, 10);
}

TEST_F(ServerProtocol, MaxCompletionTokensWinsAndStopMayBeOneString) {
    ParsedRequest out;
    ASSERT_FALSE(chat({{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                       {"max_tokens", 10},
                       {"max_completion_tokens", 20},
                       {"stop", "END"},
                       {"logprobs", true},
                       {"temperature", nullptr}},
                      out));
    EXPECT_EQ(out.gen.max_tokens, 20);
    EXPECT_EQ(out.gen.stop, std::vector<std::string>{"END"});
    EXPECT_EQ(out.gen.top_logprobs, 0);                // logprobs alone: the sampled token only
    EXPECT_FLOAT_EQ(out.gen.sampling.temperature, 1);  // null means "default"
}

TEST_F(ServerProtocol, LimitsAndWrongTypesNameTheField) {
    Json many_stops = Json::array();
    for (int i = 0; i < 17; ++i) many_stops.push_back("s" + std::to_string(i));
    Json many_bias = Json::object();
    for (int i = 0; i < 1025; ++i) many_bias[std::to_string(i % kVocab) + std::string(i / kVocab, ' ')] = 1;
    const std::vector<std::pair<Json, std::string>> cases = {
        {{{"n", 17}}, "n"},
        {{{"n", 0}}, "n"},
        {{{"n", "2"}}, "n"},
        {{{"n", 1.5}}, "n"},
        {{{"max_tokens", 0}}, "max_tokens"},
        {{{"max_tokens", -5}}, "max_tokens"},
        {{{"max_tokens", 100000}}, "max_tokens"},
        {{{"max_completion_tokens", 100000}}, "max_completion_tokens"},
        {{{"max_tokens", "10"}}, "max_tokens"},
        {{{"logprobs", true}, {"top_logprobs", 21}}, "top_logprobs"},
        {{{"top_logprobs", 2}}, "top_logprobs"},
        {{{"logprobs", 1}}, "logprobs"},
        {{{"stop", many_stops}}, "stop"},
        {{{"stop", std::string(257, 'x')}}, "stop"},
        {{{"stop", 5}}, "stop"},
        {{{"stop", {"ok", 1}}}, "stop"},
        {{{"logit_bias", many_bias}}, "logit_bias"},
        {{{"logit_bias", {{"abc", 1}}}}, "logit_bias"},
        {{{"logit_bias", {{std::to_string(kVocab), 1}}}}, "logit_bias"},
        {{{"logit_bias", {{"-1", 1}}}}, "logit_bias"},
        {{{"logit_bias", {{"65", 101}}}}, "logit_bias"},
        {{{"logit_bias", {{"65", "x"}}}}, "logit_bias"},
        {{{"logit_bias", {1, 2}}}, "logit_bias"},
        {{{"temperature", "hot"}}, "temperature"},
        {{{"temperature", 2.5}}, "temperature"},
        {{{"temperature", -1}}, "temperature"},
        {{{"temperature", true}}, "temperature"},
        {{{"top_p", 1.5}}, "top_p"},
        {{{"top_k", -2}}, "top_k"},
        {{{"min_p", -0.1}}, "min_p"},
        {{{"presence_penalty", 3}}, "presence_penalty"},
        {{{"frequency_penalty", "1"}}, "frequency_penalty"},
        {{{"repetition_penalty", 0}}, "repetition_penalty"},
        {{{"seed", "x"}}, "seed"},
        {{{"seed", 1.5}}, "seed"},
        {{{"ignore_eos", 1}}, "ignore_eos"},
        {{{"stream", "yes"}}, "stream"},
        {{{"stream_options", 5}}, "stream_options"},
        {{{"stream_options", {{"include_usage", 1}}}}, "stream_options"},
        {{{"model", 5}}, "model"},
        {{{"tools", "x"}}, "tools"},
        {{{"add_generation_prompt", "no"}}, "add_generation_prompt"},
        {{{"messages", nullptr}}, "messages"},
        {{{"messages", Json::array()}}, "messages"},
        {{{"messages", {1}}}, "messages"},
        {{{"messages", {{{"content", "x"}}}}}, "messages"},
        {{{"messages", "hi"}}, "messages"},
    };
    for (const auto& [extra, param] : cases) expect_chat_error(extra, param);
}

TEST_F(ServerProtocol, PromptLongerThanContextIsRejected) {
    ctx_.max_context = 16;
    expect_chat_error({{"messages", {{{"role", "user"}, {"content", std::string(40, 'x')}}}}}, "messages");
    ParsedRequest out;
    auto err = chat({{"messages", {{{"role", "user"}, {"content", std::string(40, 'x')}}}}}, out);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->code, "context_length_exceeded");
}

TEST_F(ServerProtocol, CompletionAcceptsStringsAndTokenIds) {
    ParsedRequest out;
    ASSERT_FALSE(completion({{"prompt", "abc"}, {"max_tokens", 4}, {"logprobs", 3}}, out));
    EXPECT_EQ(out.kind, ApiKind::Completion);
    EXPECT_EQ(out.gen.prompt, tok_.encode("abc", {.add_special = true, .parse_special = true}));
    EXPECT_EQ(out.gen.top_logprobs, 3);
    EXPECT_EQ(out.gen.max_tokens, 4);

    ParsedRequest ids;
    ASSERT_FALSE(completion({{"prompt", {1, 2, 3}}}, ids));
    EXPECT_EQ(ids.gen.prompt, (std::vector<int32_t>{1, 2, 3}));
    EXPECT_EQ(ids.gen.top_logprobs, -1);

    ParsedRequest nested;
    ASSERT_FALSE(completion({{"prompt", {{5, 6}}}}, nested));
    EXPECT_EQ(nested.gen.prompt, (std::vector<int32_t>{5, 6}));

    ParsedRequest one;
    ASSERT_FALSE(completion({{"prompt", {"xy"}}}, one));
    EXPECT_EQ(one.gen.prompt, tok_.encode("xy", {.add_special = true, .parse_special = true}));
}

TEST_F(ServerProtocol, CompletionErrors) {
    expect_completion_error(Json::object(), "prompt");
    expect_completion_error({{"prompt", {"a", "b"}}}, "prompt");
    expect_completion_error({{"prompt", Json::array()}}, "prompt");
    expect_completion_error({{"prompt", {kVocab}}}, "prompt");
    expect_completion_error({{"prompt", {1, "a"}}}, "prompt");
    expect_completion_error({{"prompt", {-1}}}, "prompt");
    expect_completion_error({{"prompt", 5}}, "prompt");
    expect_completion_error({{"prompt", ""}}, "prompt");  // nothing to condition on
    expect_completion_error({{"prompt", "a"}, {"logprobs", 21}}, "logprobs");
    expect_completion_error({{"prompt", "a"}, {"logprobs", true}}, "logprobs");
    expect_completion_error({{"prompt", "a"}, {"echo", true}}, "echo");
    expect_completion_error({{"prompt", "a"}, {"suffix", "b"}}, "suffix");
    expect_completion_error({{"prompt", "a"}, {"max_tokens", 512}}, "max_tokens");
    ParsedRequest fits;
    EXPECT_FALSE(completion({{"prompt", "a"}, {"max_tokens", 511}}, fits));
}

// The tiny vocabulary's longest token is "<|im_start|>" (12 bytes), so a
// prompt of B bytes is at least ceil(B / 12) tokens.
TEST_F(ServerProtocol, HugePromptIsRefusedFromItsLengthWithoutEncoding) {
    ASSERT_EQ(tok_.max_token_bytes(), 12u);
    const std::string huge(4u << 20, 'x');  // 4 MiB: 349,526+ tokens vs 512
    const Json body = {{"prompt", huge}};
    ParsedRequest out;
    const auto start = std::chrono::steady_clock::now();
    auto err = completion(body, out);
    const auto refuse = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(err);
    EXPECT_EQ(err->http_status, 400);
    EXPECT_EQ(err->param, "prompt");
    EXPECT_EQ(err->code, "context_length_exceeded");
    // Only the length check words it so; the exact check reports a count.
    EXPECT_NE(err->message.find("at least 349526 tokens"), std::string::npos) << err->message;
    EXPECT_TRUE(out.gen.prompt.empty());
    // And it takes less time than encoding a sixteenth of the prompt.
    const auto encode_start = std::chrono::steady_clock::now();
    const size_t n = tok_.encode(std::string_view(huge).substr(0, huge.size() / 16), {.add_special = true, .parse_special = true}).size();
    const auto encode = std::chrono::steady_clock::now() - encode_start;
    EXPECT_EQ(n, huge.size() / 16);
    EXPECT_LT(refuse, encode);

    ParsedRequest chat_out;
    err = chat({{"messages", {{{"role", "user"}, {"content", std::string(1u << 20, 'x')}}}}}, chat_out);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->param, "messages");
    EXPECT_EQ(err->code, "context_length_exceeded");
    EXPECT_NE(err->message.find("at least"), std::string::npos) << err->message;
}

// At the edge the bound is exact (each "<|im_start|>" is one token), so it
// refuses nothing the exact check would pass.
TEST_F(ServerProtocol, LengthBoundRefusesOnlyWhatTheExactCheckWould) {
    auto repeat = [](int times) {
        std::string s;
        for (int i = 0; i < times; ++i) s += "<|im_start|>";
        return s;
    };
    ParsedRequest fits;
    ASSERT_FALSE(completion({{"prompt", repeat(511)}}, fits));  // 511 tokens + 1 generated
    EXPECT_EQ(fits.gen.prompt.size(), 511u);
    EXPECT_EQ(fits.gen.max_tokens, 1);
    ParsedRequest full;
    auto err = completion({{"prompt", repeat(512)}}, full);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->code, "context_length_exceeded");
    EXPECT_NE(err->message.find("at least 512 tokens"), std::string::npos) << err->message;
    // max_tokens counts too: 500 + 12 fits, 500 + 13 does not.
    ParsedRequest with_max;
    EXPECT_FALSE(completion({{"prompt", repeat(500)}, {"max_tokens", 12}}, with_max));
    err = completion({{"prompt", repeat(500)}, {"max_tokens", 13}}, with_max);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->param, "max_tokens");
    EXPECT_EQ(err->code, "context_length_exceeded");
}

// n x max_tokens x (top_logprobs + 1) of a non-streamed response is capped
// (ProtocolLimits::max_response_tokens); streams are not held, so not capped.
TEST_F(ServerProtocol, NonStreamedResponseSizeIsCapped) {
    ctx_.max_context = 8192;
    const Json messages = {{{"role", "user"}, {"content", "hi"}}};
    ParsedRequest out;
    auto err = chat({{"messages", messages}, {"n", 16}, {"max_tokens", 4000}, {"logprobs", true},
                     {"top_logprobs", 20}},
                    out);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->http_status, 400);
    EXPECT_EQ(err->type, "invalid_request_error");
    EXPECT_EQ(err->param, "max_tokens");
    EXPECT_EQ(err->code, "response_too_large");
    for (const char* part : {"n (16)", "max_tokens (4000)", "top_logprobs (20)", "1344000", "524288", "stream"}) {
        EXPECT_NE(err->message.find(part), std::string::npos) << part << " in " << err->message;
    }
    EXPECT_TRUE(out.gen.prompt.empty());  // refused before rendering or encoding

    ParsedRequest streamed;
    EXPECT_FALSE(chat({{"messages", messages}, {"n", 16}, {"max_tokens", 4000}, {"logprobs", true},
                       {"top_logprobs", 20}, {"stream", true}},
                      streamed));
    ParsedRequest usual;
    EXPECT_FALSE(chat({{"messages", messages}, {"n", 4}, {"max_tokens", 2048}}, usual));
    ParsedRequest all_defaults;  // n = 16, max_tokens left to the 8K context
    EXPECT_FALSE(chat({{"messages", messages}, {"n", 16}}, all_defaults));

    auto fresh = [this](const Json& body) {
        ParsedRequest parsed;
        return completion(body, parsed);
    };
    err = fresh({{"prompt", "a"}, {"n", 16}, {"max_tokens", 4000}, {"logprobs", 20}});
    ASSERT_TRUE(err);
    EXPECT_NE(err->message.find("logprobs (20)"), std::string::npos) << err->message;

    // The exact edge, and a default max_tokens counted as the most it can be.
    limits_.max_response_tokens = 100;
    EXPECT_FALSE(fresh({{"prompt", "a"}, {"max_tokens", 50}, {"n", 2}}));
    err = fresh({{"prompt", "a"}, {"max_tokens", 51}, {"n", 2}});
    ASSERT_TRUE(err);
    EXPECT_EQ(err->code, "response_too_large");
    EXPECT_FALSE(fresh({{"prompt", "a"}, {"max_tokens", 10}, {"logprobs", 9}}));
    EXPECT_TRUE(fresh({{"prompt", "a"}, {"max_tokens", 10}, {"logprobs", 10}}));
    err = fresh({{"prompt", "a"}});
    ASSERT_TRUE(err);
    EXPECT_NE(err->message.find("default: up to 8191"), std::string::npos) << err->message;
}

TEST_F(ServerProtocol, StrongNegativeBiasOnEveryTokenIsAllowed) {
    Json bias = Json::object();
    for (int i = 0; i < kVocab; ++i) bias[std::to_string(i)] = -100;
    ParsedRequest out;
    // -100 is a strong bias, not a ban; the request is valid.
    EXPECT_FALSE(completion({{"prompt", "a"}, {"logit_bias", bias}}, out));
}

// The body is parsed once into ordered JSON and the messages and tools are
// handed to the template as parsed: a tool schema's keys reach the prompt in
// the order the client wrote them.
TEST_F(ServerProtocol, ToolSchemaKeyOrderReachesThePrompt) {
    const ChatTemplate t("{{ tools | tojson }}{% for m in messages %}{{ m.content }}{% endfor %}", "", "");
    PromptContext ctx = ctx_;
    ctx.chat_template = &t;
    Json body;
    ASSERT_FALSE(parse_json_object(R"({"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function",)"
                                   R"( "function": {"name": "f", "parameters": {"type": "object", "properties":)"
                                   R"( {"zeta": {"type": "string"}, "alpha": {"type": "integer"}}}}}]})",
                                   64, body));
    ParsedRequest out;
    auto err = parse_chat_request(body, ctx, limits_, out);
    ASSERT_FALSE(err) << err->message;
    const std::string expected =
        R"([{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": )"
        R"({"zeta": {"type": "string"}, "alpha": {"type": "integer"}}}}}]hi)";
    EXPECT_EQ(out.gen.prompt, tok_.encode(expected, {.parse_special = true}));
}

TEST(ServerJsonBody, KeepsKeyOrderAndTheLastOfARepeatedKey) {
    Json out;
    ASSERT_FALSE(parse_json_object(R"({"z": 1, "a": {"y": [1, {"c": 0, "b": 1}], "x": null}, "z": 3, "m": 2})", 8, out));
    EXPECT_EQ(dump_json(out), R"({"z":3,"a":{"y":[1,{"c":0,"b":1}],"x":null},"m":2})");
}

TEST(ServerJsonBody, RejectsMalformedDeepAndNonObjectBodies) {
    Json out;
    EXPECT_FALSE(parse_json_object(R"({"a": [1, {"b": 2}]})", 8, out));
    EXPECT_EQ(out["a"][1]["b"], 2);
    for (const char* bad : {"", "{", "not json", "[1, 2]", "\"s\"", "{\"a\": 1} x", "{\"a\": \"\xff\"}"}) {
        auto err = parse_json_object(bad, 8, out);
        ASSERT_TRUE(err) << bad;
        EXPECT_EQ(err->http_status, 400);
    }
    const std::string deep = std::string(100, '[') + std::string(100, ']');
    auto err = parse_json_object("{\"a\": " + deep + "}", 64, out);
    ASSERT_TRUE(err);
    EXPECT_NE(err->message.find("deeper"), std::string::npos);
    // Brackets inside strings do not count.
    EXPECT_FALSE(parse_json_object("{\"a\": \"" + deep + "\\\"[[[\"}", 2, out));
}

TEST(ServerJsonBody, IntegersMustBeWholeAndInRange) {
    EXPECT_EQ(json_to_int(Json(5), 0, 10), 5);
    EXPECT_EQ(json_to_int(Json(5.0), 0, 10), 5);
    EXPECT_FALSE(json_to_int(Json(5.5), 0, 10));
    EXPECT_FALSE(json_to_int(Json(11), 0, 10));
    EXPECT_FALSE(json_to_int(Json(-1), 0, 10));
    EXPECT_FALSE(json_to_int(Json(18446744073709551615ull), 0, INT64_MAX));
    EXPECT_FALSE(json_to_int(Json(1e300), 0, INT64_MAX));
    EXPECT_FALSE(json_to_int(Json("5"), 0, 10));
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// A marked message pins exactly the tokens its conversation prefix renders to.
TEST_F(ServerProtocol, CacheControlPinsTheMarkedConversationPrefix) {
    const Json body = {{"messages",
                        {{{"role", "system"}, {"content", "be brief"}, {"cache_control", {{"type", "ephemeral"}, {"ttl", "10m"}}}},
                         {{"role", "user"}, {"content", "hi"}}}}};
    ParsedRequest out;
    auto err = chat(body, out);
    ASSERT_FALSE(err) << err->message;
    const std::string prefix = "<|im_start|>system\nbe brief<|im_end|>\n";
    EXPECT_EQ(out.gen.cache_pin.n_tokens, static_cast<int64_t>(tok_.encode(prefix, {.parse_special = true}).size()));
    EXPECT_EQ(out.gen.cache_pin.ttl, std::chrono::seconds(600));
    ParsedRequest whole;
    ASSERT_FALSE(completion({{"prompt", "abcabc"}, {"cache_control", {{"type", "ephemeral"}}}}, whole));
    EXPECT_EQ(whole.gen.cache_pin.n_tokens, static_cast<int64_t>(whole.gen.prompt.size()));
    ParsedRequest plain;
    ASSERT_FALSE(completion({{"prompt", "abcabc"}}, plain));
    EXPECT_EQ(plain.gen.cache_pin.n_tokens, 0);
    expect_chat_error({{"cache_control", {{"type", "ephemeral"}, {"ttl", "9h"}}}}, "cache_control");
}

}  // namespace
}  // namespace tessera
