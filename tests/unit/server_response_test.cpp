// Unit tests for what the server sends back: OpenAI response and chunk shapes,
// both logprobs formats, usage, SSE framing, error bodies, Prometheus text and
// API key checks. No model needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "server/api_error.h"
#include "server/api_keys.h"
#include "server/openai_response.h"
#include "server/prometheus.h"

namespace tessera {
namespace {

// Token i reads as "t<i>"; token 99 is half of a UTF-8 character.
std::string piece(int32_t id) { return id == 99 ? std::string("\xE2\x82") : "t" + std::to_string(id); }

ResponseMeta meta(ApiKind kind, bool logprobs = false) {
    return ResponseMeta{.kind = kind, .id = make_response_id(kind, 0xabc), .created = 1700000000, .model = "my-model", .logprobs = logprobs};
}

TEST(ServerResponse, ChatCompletionShape) {
    std::vector<ChoiceResult> choices = {{"Hello", FinishReason::Stop, {}}, {"Hi", FinishReason::Length, {}}};
    const Json j = response_json(meta(ApiKind::Chat), choices, {10, 7, 4}, piece);
    EXPECT_EQ(j["id"], "chatcmpl-0000000000000abc");
    EXPECT_EQ(j["object"], "chat.completion");
    EXPECT_EQ(j["created"], 1700000000);
    EXPECT_EQ(j["model"], "my-model");
    ASSERT_EQ(j["choices"].size(), 2u);
    EXPECT_EQ(j["choices"][0]["index"], 0);
    EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
    EXPECT_EQ(j["choices"][0]["message"]["content"], "Hello");
    EXPECT_TRUE(j["choices"][0]["logprobs"].is_null());
    EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
    EXPECT_EQ(j["choices"][1]["index"], 1);
    EXPECT_EQ(j["choices"][1]["finish_reason"], "length");
    const Json& u = j["usage"];
    EXPECT_EQ(u["prompt_tokens"], 10);
    EXPECT_EQ(u["completion_tokens"], 7);
    EXPECT_EQ(u["total_tokens"], 17);
    EXPECT_EQ(u["prompt_tokens_details"]["cached_tokens"], 4);
}

TEST(ServerResponse, TextCompletionShape) {
    const Json j = response_json(meta(ApiKind::Completion), {{" world", FinishReason::Length, {}}}, {3, 2, 0}, piece);
    EXPECT_EQ(j["id"].get<std::string>().rfind("cmpl-", 0), 0u);
    EXPECT_EQ(j["object"], "text_completion");
    EXPECT_EQ(j["choices"][0]["text"], " world");
    EXPECT_FALSE(j["choices"][0].contains("message"));
    EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
    EXPECT_EQ(j["usage"]["total_tokens"], 5);
}

TEST(ServerResponse, ChatLogprobsFormat) {
    std::vector<TokenLogprob> lps = {{5, -0.5f, {{5, -0.5f}, {6, -1.5f}}}, {99, -INFINITY, {}}};
    const Json j = response_json(meta(ApiKind::Chat, true), {{"x", FinishReason::Stop, lps}}, {}, piece);
    const Json& content = j["choices"][0]["logprobs"]["content"];
    ASSERT_EQ(content.size(), 2u);
    EXPECT_EQ(content[0]["token"], "t5");
    EXPECT_DOUBLE_EQ(content[0]["logprob"].get<double>(), -0.5);
    EXPECT_EQ(content[0]["bytes"], Json({116, 53}));
    ASSERT_EQ(content[0]["top_logprobs"].size(), 2u);
    EXPECT_EQ(content[0]["top_logprobs"][1]["token"], "t6");
    EXPECT_DOUBLE_EQ(content[0]["top_logprobs"][1]["logprob"].get<double>(), -1.5);
    EXPECT_EQ(content[0]["top_logprobs"][1]["bytes"], Json({116, 54}));
    // A partial UTF-8 token keeps its exact bytes; -inf becomes a finite number.
    EXPECT_EQ(content[1]["bytes"], Json({0xE2, 0x82}));
    EXPECT_TRUE(std::isfinite(content[1]["logprob"].get<double>()));
    const std::string wire = dump_json(j);  // must not throw on the invalid UTF-8
    EXPECT_NE(wire.find("\xEF\xBF\xBD"), std::string::npos);
}

TEST(ServerResponse, CompletionLogprobsFormatCarriesOffsetsAcrossChunks) {
    std::vector<TokenLogprob> lps = {{1, -0.1f, {{1, -0.1f}, {2, -2.0f}}}, {10, -0.2f, {}}};
    int64_t offset = 0;
    const Json j = completion_logprobs_json(lps, piece, offset);
    EXPECT_EQ(j["tokens"], Json({"t1", "t10"}));
    EXPECT_EQ(j["token_logprobs"].size(), 2u);
    EXPECT_DOUBLE_EQ(j["top_logprobs"][0]["t2"].get<double>(), -2.0);
    EXPECT_EQ(j["top_logprobs"][1], Json::object());
    EXPECT_EQ(j["text_offset"], Json({0, 2}));
    EXPECT_EQ(offset, 5);
    const Json next = completion_logprobs_json({{3, -1.0f, {}}}, piece, offset);
    EXPECT_EQ(next["text_offset"], Json({5}));
}

TEST(ServerResponse, ChatChunks) {
    const ResponseMeta m = meta(ApiKind::Chat);
    const Json first = chunk_json(m, {0, "", true, FinishReason::None, nullptr}, false);
    EXPECT_EQ(first["object"], "chat.completion.chunk");
    EXPECT_EQ(first["choices"][0]["delta"], Json({{"role", "assistant"}, {"content", ""}}));
    EXPECT_TRUE(first["choices"][0]["finish_reason"].is_null());
    EXPECT_FALSE(first.contains("usage"));

    const Json mid = chunk_json(m, {1, "lo", false, FinishReason::None, nullptr}, true);
    EXPECT_EQ(mid["choices"][0]["index"], 1);
    EXPECT_EQ(mid["choices"][0]["delta"], Json({{"content", "lo"}}));
    EXPECT_TRUE(mid.contains("usage"));
    EXPECT_TRUE(mid["usage"].is_null());

    const Json last = chunk_json(m, {0, "", false, FinishReason::Stop, nullptr}, false);
    EXPECT_EQ(last["choices"][0]["delta"], Json::object());
    EXPECT_EQ(last["choices"][0]["finish_reason"], "stop");

    const Json usage = usage_chunk_json(m, {4, 3, 0});
    EXPECT_EQ(usage["choices"], Json::array());
    EXPECT_EQ(usage["usage"]["total_tokens"], 7);
}

TEST(ServerResponse, CompletionChunks) {
    const Json c = chunk_json(meta(ApiKind::Completion), {0, "ab", false, FinishReason::Length, nullptr}, false);
    EXPECT_EQ(c["object"], "text_completion");
    EXPECT_EQ(c["choices"][0]["text"], "ab");
    EXPECT_EQ(c["choices"][0]["finish_reason"], "length");
    EXPECT_FALSE(c["choices"][0].contains("delta"));
}

TEST(ServerResponse, SseFraming) {
    EXPECT_EQ(sse_event(Json{{"a", 1}}), "data: {\"a\":1}\n\n");
    EXPECT_EQ(sse_done(), "data: [DONE]\n\n");
}

TEST(ServerResponse, FinishReasonNames) {
    EXPECT_STREQ(openai_finish_reason(FinishReason::Stop), "stop");
    EXPECT_STREQ(openai_finish_reason(FinishReason::Length), "length");
    EXPECT_STREQ(openai_finish_reason(FinishReason::Cancelled), "abort");
}

TEST(ServerError, OpenAiErrorBody) {
    const Json j = bad_request("n", "'n' must be an integer").to_json();
    EXPECT_EQ(j, Json({{"error",
                        {{"message", "'n' must be an integer"},
                         {"type", "invalid_request_error"},
                         {"param", "n"},
                         {"code", nullptr}}}}));
    const ApiError none = not_found("Unknown route");
    EXPECT_EQ(none.http_status, 404);
    EXPECT_TRUE(none.to_json()["error"]["param"].is_null());
    EXPECT_EQ(error_for_status(413, "POST", "/x").http_status, 413);
    EXPECT_EQ(error_for_status(405, "GET", "/v1/completions").to_json()["error"]["code"], "method_not_allowed");
    EXPECT_EQ(api_error(ErrorKind::Overloaded, "full").http_status, 429);
    EXPECT_EQ(unauthorized().http_status, 401);
}

TEST(ServerPrometheus, RendersHistogramsGaugesAndCounters) {
    EngineMetrics m;
    m.ttft.observe(0.003);
    m.ttft.observe(0.2);
    m.ttft.observe(500.0);  // beyond the last bound: only +Inf
    m.waiting = 3;
    m.kv_blocks_total = 100;
    m.kv_blocks_cached = 7;
    m.kv_slots_unfilled = 21;
    m.kv_block_size = 16;
    m.prefix_hit_tokens = 64;
    m.generated_tokens = 12;
    const std::string text = render_prometheus(m);
    auto has = [&](const std::string& line) { return text.find(line + "\n") != std::string::npos; };
    EXPECT_TRUE(has("# TYPE tessera_time_to_first_token_seconds histogram"));
    EXPECT_TRUE(has("tessera_time_to_first_token_seconds_bucket{le=\"0.005\"} 1"));
    EXPECT_TRUE(has("tessera_time_to_first_token_seconds_bucket{le=\"0.25\"} 2"));
    EXPECT_TRUE(has("tessera_time_to_first_token_seconds_bucket{le=\"120\"} 2"));
    EXPECT_TRUE(has("tessera_time_to_first_token_seconds_bucket{le=\"+Inf\"} 3"));
    EXPECT_TRUE(has("tessera_time_to_first_token_seconds_count 3"));
    EXPECT_NE(text.find("tessera_time_to_first_token_seconds_sum 500.2"), std::string::npos);
    EXPECT_TRUE(has("tessera_inter_token_latency_seconds_count 0"));
    EXPECT_TRUE(has("tessera_e2e_request_latency_seconds_bucket{le=\"+Inf\"} 0"));
    EXPECT_TRUE(has("# TYPE tessera_num_requests_waiting gauge"));
    EXPECT_TRUE(has("tessera_num_requests_waiting 3"));
    EXPECT_TRUE(has("tessera_num_requests_running 0"));
    EXPECT_TRUE(has("tessera_kv_blocks_total 100"));
    EXPECT_TRUE(has("tessera_kv_blocks_used 0"));
    EXPECT_TRUE(has("tessera_kv_blocks_cached 7"));
    EXPECT_TRUE(has("tessera_kv_slots_unfilled 21"));
    EXPECT_TRUE(has("tessera_kv_block_size 16"));
    EXPECT_TRUE(has("# TYPE tessera_prefix_cache_hits_total counter"));
    EXPECT_TRUE(has("tessera_prefix_cache_hits_total 64"));
    EXPECT_TRUE(has("tessera_prefix_cache_queries_total 0"));
    EXPECT_TRUE(has("tessera_generation_tokens_total 12"));
    EXPECT_TRUE(has("tessera_prompt_tokens_total 0"));
    EXPECT_TRUE(has("tessera_preemptions_total 0"));
    EXPECT_TRUE(has("tessera_requests_finished_total 0"));
    // Every sample line is "name[{labels}] value".
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t end = text.find('\n', pos);
        ASSERT_NE(end, std::string::npos);
        const std::string line = text.substr(pos, end - pos);
        if (line[0] != '#') {
            EXPECT_EQ(std::count(line.begin(), line.end(), ' '), 1) << line;
        }
        pos = end + 1;
    }
}

TEST(ServerApiKeys, BearerCheckAndSalts) {
    const ApiKeys off;
    EXPECT_FALSE(off.enabled());
    const ApiKeys keys({"alpha", " beta \n", ""});
    EXPECT_EQ(keys.size(), 2u);
    EXPECT_FALSE(keys.find(""));
    EXPECT_FALSE(keys.find("alpha"));
    EXPECT_FALSE(keys.find("Bearer gamma"));
    EXPECT_FALSE(keys.find("Bearer alph"));
    EXPECT_FALSE(keys.find("Basic alpha"));
    const auto a = keys.find("Bearer alpha");
    const auto b = keys.find("Bearer beta");
    ASSERT_TRUE(a && b);
    const uint64_t salt_a = cache_salt_for(keys.specs()[*a]), salt_b = cache_salt_for(keys.specs()[*b]);
    EXPECT_NE(salt_a, 0u);
    EXPECT_NE(salt_a, salt_b);
    EXPECT_EQ(salt_a, cache_salt_for_key("alpha"));
}

// RFC 7235 section 2.1: the scheme name is case-insensitive.
TEST(ServerApiKeys, BearerSchemeIsCaseInsensitive) {
    const ApiKeys keys({"alpha"});
    EXPECT_EQ(keys.find("bearer alpha"), 0u);
    EXPECT_EQ(keys.find("BEARER alpha"), 0u);
    EXPECT_EQ(keys.find("bEaReR  alpha"), 0u);
    EXPECT_FALSE(keys.find("Bearer ALPHA"));  // the key itself stays case-sensitive
    EXPECT_FALSE(keys.find("Bearerxalpha"));
    EXPECT_FALSE(keys.find("bearer"));
    EXPECT_FALSE(keys.find("bearer "));
    EXPECT_FALSE(keys.find("Bearer\talpha"));
}

TEST(ServerApiKeys, KeyFileSkipsCommentsAndBlankLines) {
    const std::string path = ::testing::TempDir() + "/tessera_keys.txt";
    {
        std::ofstream out(path);
        out << "# team keys\nkey-one\n\n  key-two  \n";
    }
    auto keys = ApiKeys::from_file(path);
    ASSERT_TRUE(keys.ok()) << keys.error();
    EXPECT_EQ(keys->size(), 2u);
    EXPECT_TRUE(keys->find("Bearer key-two"));
    EXPECT_FALSE(keys->find("Bearer # team keys"));
    std::remove(path.c_str());
    EXPECT_FALSE(ApiKeys::from_file(path).ok());
}

}  // namespace
}  // namespace tessera
