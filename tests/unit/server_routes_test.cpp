// The routes' screen: what the transport refuses from a request's head alone,
// before it reads a byte of the body (no sockets involved).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "server/access_log.h"
#include "server/server_state.h"

namespace tessera {
namespace {

HttpRequest head(std::string method, std::string path, std::string authorization = "",
                 std::string content_encoding = "") {
    HttpRequest r;
    r.method = std::move(method);
    r.path = std::move(path);
    r.authorization = std::move(authorization);
    r.content_encoding = std::move(content_encoding);
    return r;
}

int refused_with(const HttpRoutes& routes, HttpRequest h) {
    const auto reply = routes.screen(h);
    return reply ? reply->status : 0;
}

TEST(ServerRoutes, ScreenRefusesFromTheHeadAlone) {
    ServerOptions options;
    options.api_keys = ApiKeys({"secret"});
    HttpServer::State state(options);
    const HttpRoutes routes = routes_for(state);

    EXPECT_EQ(refused_with(routes, head("POST", "/v1/completions")), 401);
    EXPECT_EQ(refused_with(routes, head("POST", "/v1/completions", "Bearer wrong")), 401);
    EXPECT_EQ(refused_with(routes, head("POST", "/v1/completions", "Bearer secret")), 0);
    EXPECT_EQ(refused_with(routes, head("POST", "/v1/completions", "bearer secret")), 0);
    EXPECT_EQ(refused_with(routes, head("POST", "/v1/completions", "Bearer secret", "gzip")), 415);
    EXPECT_EQ(refused_with(routes, head("POST", "/v1/completions", "Bearer secret", "identity")), 0);
    EXPECT_EQ(refused_with(routes, head("GET", "/v1/completions", "Bearer secret")), 405);
    EXPECT_EQ(refused_with(routes, head("GET", "/nowhere", "Bearer secret")), 404);
    EXPECT_EQ(refused_with(routes, head("GET", "/health")), 0);  // the probes need no key
    EXPECT_EQ(refused_with(routes, head("GET", "/ready")), 0);
    EXPECT_EQ(refused_with(routes, head("GET", "/props")), 401);
    EXPECT_EQ(refused_with(routes, head("GET", "/v1/models/some/name")), 401);  // a prefix route
    EXPECT_EQ(refused_with(routes, head("GET", "/v1/models/", "Bearer secret")), 404);  // an empty id is no model
    EXPECT_EQ(refused_with(routes, head("OPTIONS", "/v1/models")), 405);  // no CORS configured: not a preflight
}

TEST(ServerRoutes, CorsPreflightNeedsNoKeyAndErrorsCarryAllowOrigin) {
    ServerOptions options;
    options.api_keys = ApiKeys({"secret"});
    options.cors_origins = {"http://a.example"};
    HttpServer::State state(options);
    const HttpRoutes routes = routes_for(state);
    HttpRequest pre = head("OPTIONS", "/v1/chat/completions");
    pre.origin = "http://a.example";
    const auto ok = routes.screen(pre);
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->status, 204);
    pre.origin = "http://b.example";
    EXPECT_EQ(routes.screen(pre)->status, 403);

    HttpRequest post = head("POST", "/v1/chat/completions");
    post.origin = "http://a.example";
    const auto denied = routes.screen(post);
    ASSERT_TRUE(denied);
    EXPECT_EQ(denied->status, 401);
    const auto& h = denied->headers;
    EXPECT_NE(std::find(h.begin(), h.end(), std::pair<std::string, std::string>("Access-Control-Allow-Origin",
                                                                               "http://a.example")),
              h.end());
}

TEST(AccessLog, TextAndJsonLinesCarryTheRequestsFacts) {
    const auto t0 = std::chrono::steady_clock::now();
    AccessRecord r{"10.0.0.1", "POST", "/v1/completions", 200, true, {12, 5, t0 + std::chrono::milliseconds(40)},
                   t0, t0 + std::chrono::milliseconds(250)};
    const std::string text = format_access_line(r, AccessLogFormat::Text);
    EXPECT_NE(text.find(" 10.0.0.1 POST /v1/completions 200 prompt=12 completion=5 ttft_ms=40.0 total_ms=250.0"),
              std::string::npos)
        << text;
    const Json j = Json::parse(format_access_line(r, AccessLogFormat::Json));
    EXPECT_EQ(j["status"], 200);
    EXPECT_EQ(j["prompt_tokens"], 12);
    EXPECT_EQ(j["completion_tokens"], 5);
    EXPECT_DOUBLE_EQ(j["ttft_ms"].get<double>(), 40.0);
    EXPECT_DOUBLE_EQ(j["total_ms"].get<double>(), 250.0);
    r.completed = false;
    r.usage = {};
    const std::string aborted = format_access_line(r, AccessLogFormat::Text);
    EXPECT_EQ(aborted.find("prompt="), std::string::npos);
    EXPECT_EQ(aborted.substr(aborted.size() - 8), " aborted");
}

TEST(ServerRoutes, HandlersAnswerWithoutAModel) {
    HttpServer::State state(ServerOptions{});
    const HttpRoutes routes = routes_for(state);
    HttpRequest req = head("GET", "/health");
    EXPECT_EQ(routes.handle(req).status, 200);
    req = head("POST", "/tokenize");
    req.body = R"({"content": "hi"})";
    const HttpReply loading = routes.handle(req);
    EXPECT_EQ(loading.status, 503);
    EXPECT_NE(loading.body.find("still loading"), std::string::npos);
}

}  // namespace
}  // namespace tessera
