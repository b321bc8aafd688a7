// The routes' screen: what the transport refuses from a request's head alone,
// before it reads a byte of the body (no sockets involved).
#include <gtest/gtest.h>

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

int refused_with(const HttpRoutes& routes, const HttpRequest& h) {
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
    EXPECT_EQ(refused_with(routes, head("GET", "/health")), 0);  // the one route without a key
    EXPECT_EQ(refused_with(routes, head("GET", "/ready")), 401);
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
