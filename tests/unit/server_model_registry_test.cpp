// The model registry (lookup by any name, the first as default, unload while a
// request holds the model), the models-file parser and query parameters.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "server/model_registry.h"
#include "server/prometheus.h"
#include "server/query_string.h"
#include "server/server_state.h"

namespace tessera {
namespace {

ModelSpec spec(std::string name, std::vector<std::string> aliases = {}) {
    ModelSpec s;
    s.name = std::move(name);
    s.path = s.name + ".gguf";
    s.aliases = std::move(aliases);
    return s;
}

// A model with no weights or engine: the registry only reads its spec.
ServedModelPtr fake(const ModelSpec& s) {
    auto m = std::make_shared<ServedModel>();
    m->spec = s;
    return m;
}

void add(ModelRegistry& r, const ModelSpec& s) {
    ASSERT_TRUE(r.reserve(s).ok());
    r.add(fake(s));
}

TEST(ModelRegistry, LooksUpEveryNameAndDefaultsToTheFirst) {
    ModelRegistry r(4);
    EXPECT_EQ(r.find(""), nullptr);
    add(r, spec("a", {"a-alias"}));
    add(r, spec("b"));
    EXPECT_EQ(r.find("")->name(), "a");
    EXPECT_EQ(r.find("a-alias")->name(), "a");
    EXPECT_EQ(r.find("b")->name(), "b");
    EXPECT_EQ(r.find("c"), nullptr);
    ASSERT_EQ(r.models().size(), 2u);
    EXPECT_EQ(r.models()[1]->name(), "b");
}

TEST(ModelRegistry, RefusesTakenNamesAndTheCap) {
    ModelRegistry r(2);
    add(r, spec("a", {"x"}));
    EXPECT_FALSE(r.reserve(spec("x")).ok());            // an alias is taken too
    EXPECT_FALSE(r.reserve(spec("new", {"a"})).ok());   // and a name as an alias
    ASSERT_TRUE(r.reserve(spec("b")).ok());
    EXPECT_FALSE(r.reserve(spec("b")).ok());            // being loaded counts
    const Status full = r.reserve(spec("c"));
    EXPECT_EQ(full.kind(), ErrorKind::LimitExceeded);
    r.release(spec("b"));                               // the load failed
    EXPECT_TRUE(r.reserve(spec("c")).ok());
    const auto status = r.status();
    ASSERT_EQ(status.size(), 2u);
    EXPECT_STREQ(status[0].state, "loading");
    EXPECT_STREQ(status[1].state, "ready");
}

TEST(ModelRegistry, UnloadHidesAtOnceAndFreesAfterTheLastHolder) {
    ModelRegistry r(4);
    add(r, spec("a"));
    add(r, spec("b", {"bee"}));
    ServedModelPtr held = r.find("bee");  // a request in flight
    std::weak_ptr<const ServedModel> watch = held;
    EXPECT_TRUE(r.remove("bee"));
    EXPECT_EQ(r.find("b"), nullptr);
    EXPECT_EQ(r.find("bee"), nullptr);
    EXPECT_FALSE(r.remove("b"));
    EXPECT_EQ(r.find("")->name(), "a");
    {
        const auto status = r.status();  // holds the models too, while in scope
        ASSERT_EQ(status.size(), 2u);
        EXPECT_STREQ(status[1].state, "unloading");
        EXPECT_EQ(status[1].holders, 1);
    }
    EXPECT_EQ(held->name(), "b");  // still whole for its holder
    held.reset();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!watch.expired() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_TRUE(watch.expired());
    EXPECT_EQ(r.status().size(), 1u);
    add(r, spec("b"));  // the name is free again
    EXPECT_EQ(r.find("b")->name(), "b");
}

TEST(ModelsFile, ParsesEveryField) {
    auto specs = parse_models_file(R"([
        {"name": "small", "path": "a.gguf"},
        {"name": "big", "path": "b.gguf", "aliases": ["b1", "org/b2"], "ctx_size": 4096, "kv_memory": "512M",
         "draft_model": "d.gguf", "chat_template": "chatml"},
        {"name": "c", "path": "c.gguf", "kv_memory": 1048576}])");
    ASSERT_TRUE(specs) << specs.error();
    ASSERT_EQ(specs->size(), 3u);
    EXPECT_EQ((*specs)[0].name, "small");
    EXPECT_FALSE((*specs)[0].ctx_size);
    const ModelSpec& big = (*specs)[1];
    EXPECT_EQ(big.aliases, (std::vector<std::string>{"b1", "org/b2"}));
    EXPECT_EQ(*big.ctx_size, 4096);
    EXPECT_EQ(*big.kv_memory, int64_t{512} << 20);
    EXPECT_EQ(big.draft_model, "d.gguf");
    EXPECT_EQ(big.chat_template, "chatml");
    EXPECT_EQ(*(*specs)[2].kv_memory, 1048576);
    EXPECT_TRUE(parse_models_file(R"({"models": [{"name": "a", "path": "a.gguf"}]})"));
}

TEST(ModelsFile, RefusesBadEntriesWithTheirNumber) {
    const auto why = [](const char* text) {
        auto r = parse_models_file(text);
        return r ? std::string("parsed") : r.error();
    };
    EXPECT_EQ(why("[]"), "must be a non-empty JSON list of models");
    EXPECT_EQ(why("{"), "not valid JSON");
    EXPECT_EQ(why("[[[[[[[[[[]]]]]]]]]]"), "nested deeper than 8");
    EXPECT_EQ(why(R"([{"name": "a", "path": "a"}, {"path": "b"}])"), "model 2: 'name' is required");
    EXPECT_EQ(why(R"([{"name": "a"}])"), "model 1: 'path' is required (a GGUF file)");
    EXPECT_EQ(why(R"([{"name": "a b", "path": "a"}])"),
              "model 1: 'name' must not hold spaces or control characters");
    EXPECT_EQ(why(R"([{"name": "a", "path": "a", "ctx": 5}])"), "model 1: unknown field 'ctx'");
    EXPECT_EQ(why(R"([{"name": "a", "path": "a", "ctx_size": 8}])"),
              "model 1: 'ctx_size' must be an integer in [16, 16777216]");
    EXPECT_NE(why(R"([{"name": "a", "path": "a", "kv_memory": "12Q"}])").find("'kv_memory' must be"), std::string::npos);
    EXPECT_NE(why(R"([{"name": "a", "path": "a", "kv_memory": "99999999999T"}])").find("'kv_memory'"),
              std::string::npos);
    EXPECT_EQ(why(R"([{"name": "a", "path": 3}])"), "model 1: 'path' must be a string");
    EXPECT_EQ(why(R"([{"name": "a", "path": "a", "aliases": "b"}])"), "model 1: 'aliases' must be a list of names");
    EXPECT_EQ(why(R"([{"name": "a", "path": "a"}, {"name": "b", "path": "b", "aliases": ["a"]}])"),
              "model 2: the name 'a' is used twice");
    EXPECT_EQ(why(R"([5])"), "model 1: a model must be a JSON object with 'name' and 'path'");
}

TEST(QueryString, DecodesTheNamedParameter) {
    EXPECT_EQ(query_param("model=a", "model"), "a");
    EXPECT_EQ(query_param("x=1&model=org%2Fb+c&model=z", "model"), "org/b c");
    EXPECT_EQ(query_param("model", "model"), "");
    EXPECT_EQ(query_param("models=a", "model"), std::nullopt);
    EXPECT_EQ(query_param("model=%2", "model"), std::nullopt);
    EXPECT_EQ(query_param("model=%zz", "model"), std::nullopt);
    EXPECT_EQ(query_param("", "model"), std::nullopt);
}

TEST(ServerPrometheus, EveryFamilyOnceWithOneLabelledSetPerModel) {
    EngineMetrics a, b;
    a.kv_blocks_used.store(3);
    b.kv_blocks_used.store(5);
    const MetricsSource sources[] = {{"a", &a, nullptr}, {"b\"q", &b, nullptr}};
    const std::string text = render_prometheus(sources);
    const auto count = [&text](const std::string& needle) {
        size_t n = 0;
        for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
        return n;
    };
    EXPECT_EQ(count("# TYPE tessera_kv_blocks_used gauge\n"), 1u);
    EXPECT_EQ(count("tessera_kv_blocks_used{model=\"a\"} 3\n"), 1u);
    EXPECT_EQ(count("tessera_kv_blocks_used{model=\"b\\\"q\"} 5\n"), 1u);  // the quote escaped
    EXPECT_EQ(count("tessera_time_to_first_token_seconds_bucket{le=\"+Inf\",model=\"a\"} 0\n"), 1u);
    EXPECT_EQ(count("tessera_spec_accepted_length_count{drafter=\"none\",model=\"a\"}"), 1u);
}

TEST(ServerRoutes, AdminRoutesNeedTheAdminKeyAndExistOnlyWithIt) {
    ServerOptions plain;
    plain.api_keys = ApiKeys({"user"});
    HttpServer::State without(plain);
    HttpRequest req;
    req.method = "GET";
    req.path = "/admin/models";
    req.authorization = "Bearer user";
    EXPECT_EQ(routes_for(without).screen(req)->status, 404);

    ServerOptions admin = plain;
    admin.admin_key = "boss";
    HttpServer::State with(admin);
    const HttpRoutes routes = routes_for(with);
    EXPECT_EQ(routes.screen(req)->status, 401);  // an API key does not open it
    req.authorization = "Bearer boss";
    EXPECT_FALSE(routes.screen(req));
    EXPECT_EQ(routes.handle(req).status, 200);
    req.method = "DELETE";
    req.path = "/admin/models/nope";
    EXPECT_FALSE(routes.screen(req));
    EXPECT_EQ(routes.handle(req).status, 404);
    req.method = "POST";
    req.path = "/admin/models";
    req.body = R"({"name": "x"})";
    const HttpReply bad = routes.handle(req);
    EXPECT_EQ(bad.status, 400);
    EXPECT_NE(bad.body.find("'path' is required"), std::string::npos);
}

}  // namespace
}  // namespace tessera
