// Route table, authentication, error bodies and the small endpoints of the
// HTTP server; generation lives in generation_route.cpp, sockets in
// http_transport.cpp.
#include "server/http_server.h"

#include <strings.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "server/field_reader.h"
#include "server/prometheus.h"
#include "server/query_string.h"
#include "server/server_state.h"
#include "server/web_ui.h"

namespace tessera {
namespace {

using State = HttpServer::State;
using Handler = std::function<HttpReply(State&, const HttpRequest&)>;

// Who may call a route: anyone, holders of an API key (when keys are
// configured; every route but /health, /ready and the page), or the admin.
enum class Access { Open, Key, Admin };

struct Route {
    std::string path;
    std::string method;
    Access access;
    Handler handle;
    bool prefix = false;  // matches every path under `path` (e.g. /v1/models/{id})
};

// Green when every served model is (an unloaded one no longer counts).
HttpReply handle_ready(State& st) {
    if (!st.ready.load()) return error_reply(unavailable("The model is still loading"));
    if (st.draining.load()) return error_reply(unavailable("The server is shutting down"));
    const std::vector<ServedModelPtr> models = st.models.models();
    if (models.empty()) return error_reply(unavailable("No model is loaded"));
    for (const ServedModelPtr& m : models) {
        const std::string which = models.size() > 1 ? " (model '" + m->name() + "')" : "";
        if (m->engine->model_damaged()) {
            return error_reply(unavailable("The model file changed on disk; restart the server" + which));
        }
        if (!m->engine->healthy()) return error_reply(unavailable("The engine is not making progress" + which));
    }
    return json_reply(200, {{"status", "ready"}});
}

Json model_json(State& st, const ServedModel& m, const std::string& name) {
    return {{"id", name},          {"object", "model"},  {"created", st.started_at},
            {"owned_by", "tessera"}, {"root", m.name()}, {"max_model_len", m.engine->max_context()}};
}

HttpReply handle_models(State& st) {
    Json data = Json::array();
    for (const ServedModelPtr& m : st.models.models()) {
        for (const std::string& name : m->spec.names()) data.push_back(model_json(st, *m, name));
    }
    return json_reply(200, {{"object", "list"}, {"data", std::move(data)}});
}

// GET /v1/models/{id}: the id may itself contain '/' (e.g. "org/name").
HttpReply handle_model(State& st, const HttpRequest& req) {
    const std::string id = req.path.substr(std::string_view("/v1/models/").size());
    const ServedModelPtr m = st.models.find(id);
    if (!m) return error_reply(model_not_found(id));
    return json_reply(200, model_json(st, *m, id));
}

// The model of a route that names it optionally, as llama-server's router
// does: `?model=NAME`, else the JSON body's "model", else the first.
ModelLookup optional_model(State& st, const HttpRequest& req, const Json* body) {
    if (!req.query.empty()) {
        if (auto name = query_param(req.query, "model")) return lookup_model(st, *name);
    }
    return lookup_model(st, body ? body_model(*body) : std::string());
}

// llama-server's /props: what a client needs to know to talk to this model.
HttpReply handle_props(State& st, const HttpRequest& req) {
    const ModelLookup found = optional_model(st, req, nullptr);
    if (found.error) return error_reply(*found.error);
    const ServedModel& m = *found.model;
    const EngineOptions& eo = m.engine->options();
    const Json settings = {{"n_ctx", m.engine->max_context()}, {"model", m.name()}};
    const Expected<Pooling> pooling = m.engine->embedding_pooling();
    return json_reply(200, {{"model_alias", m.name()},
                            {"model_names", m.spec.names()},
                            {"architecture", m.engine->model_config().arch},
                            {"n_ctx", m.engine->max_context()},
                            {"n_embd", m.engine->model_config().n_embd},
                            // /v1/embeddings' pooling; null when the model cannot embed
                            {"pooling", pooling ? Json(pooling_name(pooling.value())) : Json()},
                            {"total_slots", eo.max_seqs},
                            {"default_generation_settings", settings},
                            {"chat_template", m.chat_template->source()},
                            {"bos_token", m.chat_template->bos_token()},
                            {"eos_token", m.chat_template->eos_token()},
                            {"build_info", "tessera"}});
}

// Every model's series, labelled model="NAME"; `?model=NAME`: that one's only.
HttpReply handle_metrics(State& st, const HttpRequest& req) {
    if (!st.ready.load()) return error_reply(unavailable("The model is still loading"));
    std::vector<ServedModelPtr> models = st.models.models();
    if (auto name = query_param(req.query, "model")) {
        const ModelLookup found = lookup_model(st, *name);
        if (found.error) return error_reply(*found.error);
        models = {found.model};
    }
    std::vector<MetricsSource> sources;
    for (const ServedModelPtr& m : models) {
        sources.push_back({m->name(), &m->engine->metrics(), m->model ? m->model->moe_counters() : nullptr});
    }
    HttpReply r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = render_prometheus(sources) + render_key_usage(st.keys.usage());
    return r;
}

// Written straight into the body: a JSON tree of one object per token costs
// ~10x the text (a 6 MB /tokenize with pieces peaked at 400 MB that way).
std::string tokens_body(const std::vector<int32_t>& ids, const Tokenizer& tok, bool with_pieces) {
    std::string out = "{\"tokens\":[";
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i) out += ',';
        if (!with_pieces) {
            out += std::to_string(ids[i]);
            continue;
        }
        out += "{\"id\":" + std::to_string(ids[i]) + ",\"piece\":";
        out += dump_json(Json(tok.token_to_piece(ids[i], {.render_special = true})));
        out += '}';
    }
    out += "]}";
    return out;
}

HttpReply handle_tokenize(State& st, const HttpRequest& req) {
    Json body;
    if (auto err = parse_json_object(req.body, st.options.limits.max_json_depth, body)) return error_reply(*err);
    const ModelLookup found = optional_model(st, req, &body);
    if (found.error) return error_reply(*found.error);
    const ServedModel* m = found.model.get();
    FieldReader r(body);
    std::string content;
    bool add_special = false, parse_special = true, with_pieces = false;
    if (!r.find("content")) r.fail(bad_request("content", "'content' is required"));
    r.string("content", content);
    r.boolean("add_special", add_special);
    r.boolean("parse_special", parse_special);
    r.boolean("with_pieces", with_pieces);
    if (!r.ok()) return error_reply(*r.error());
    body = Json();  // the parsed copy of a large body goes before the token list grows
    const Tokenizer& tok = m->engine->tokenizer();
    HttpReply reply;
    const std::vector<int32_t> ids = tok.encode(content, {.add_special = add_special, .parse_special = parse_special});
    reply.body = tokens_body(ids, tok, with_pieces);
    return reply;
}

HttpReply handle_detokenize(State& st, const HttpRequest& req) {
    Json body;
    if (auto err = parse_json_object(req.body, st.options.limits.max_json_depth, body)) return error_reply(*err);
    const ModelLookup found = optional_model(st, req, &body);
    if (found.error) return error_reply(*found.error);
    const ServedModel* m = found.model.get();
    const Tokenizer& tok = m->engine->tokenizer();
    const auto it = body.find("tokens");
    if (it == body.end() || !it->is_array()) return error_reply(bad_request("tokens", "'tokens' must be a list"));
    std::vector<int32_t> ids;
    for (const Json& t : *it) {
        auto id = json_to_int(t, 0, tok.n_vocab() - 1);
        if (!id) {
            return error_reply(bad_request("tokens", "token ids must be integers in [0, " +
                                                         std::to_string(tok.n_vocab()) + ")"));
        }
        ids.push_back(static_cast<int32_t>(*id));
    }
    return json_reply(200, {{"content", tok.decode(ids)}});
}

HttpReply handle_index() {
    HttpReply r;
    r.content_type = "text/html; charset=utf-8";
    r.headers = {{"Cache-Control", "no-cache"}};
    r.body = std::string(web_index_html());
    return r;
}

std::vector<Route> route_table(const ServerOptions& options) {
    const auto gen = [](ApiKind kind) {
        return [kind](State& st, const HttpRequest& q) { return handle_generation(st, kind, q); };
    };
    std::vector<Route> table = {
        {"/v1/chat/completions", "POST", Access::Key, gen(ApiKind::Chat)},
        {"/v1/completions", "POST", Access::Key, gen(ApiKind::Completion)},
        {"/v1/responses", "POST", Access::Key, handle_responses},
        {"/v1/embeddings", "POST", Access::Key, handle_embeddings},
        {"/v1/models", "GET", Access::Key, [](State& st, const HttpRequest&) { return handle_models(st); }},
        {"/v1/models/", "GET", Access::Key, handle_model, true},
        {"/props", "GET", Access::Key, handle_props},
        {"/tokenize", "POST", Access::Key, handle_tokenize},
        {"/detokenize", "POST", Access::Key, handle_detokenize},
        {"/health", "GET", Access::Open, [](State&, const HttpRequest&) { return json_reply(200, {{"status", "ok"}}); }},
        {"/ready", "GET", Access::Open, [](State& st, const HttpRequest&) { return handle_ready(st); }},
        {"/metrics", "GET", Access::Key, handle_metrics},
    };
    if (!options.admin_key.empty()) {  // without --admin-key the routes do not exist (404)
        table.push_back({"/admin/models", "GET", Access::Admin, [](State& st, const HttpRequest&) { return handle_admin_list(st); }});
        table.push_back({"/admin/models", "POST", Access::Admin, handle_admin_load});
        table.push_back({"/admin/models/", "DELETE", Access::Admin, handle_admin_unload, true});
        table.push_back({"/admin/usage", "GET", Access::Admin,
                         [](State& st, const HttpRequest&) { return json_reply(200, key_usage_json(st.keys.usage())); }});
    }
    // The page holds no secret (it asks for the key itself), so it needs none.
    if (options.web_ui) table.push_back({"/", "GET", Access::Open, [](State&, const HttpRequest&) { return handle_index(); }});
    return table;
}

const Route* find_route(const std::vector<Route>& table, const HttpRequest& req, bool& path_known) {
    path_known = false;
    for (const Route& r : table) {
        const bool match = r.prefix ? req.path.size() > r.path.size() && req.path.starts_with(r.path) : r.path == req.path;
        if (!match) continue;
        path_known = true;
        if (r.method == req.method) return &r;
    }
    return nullptr;
}

// Everything that can be refused from the head alone is, before the body is
// read: unknown route, wrong method, missing key, a compressed body (never
// inflated: a small gzip body can expand a thousandfold).
std::optional<HttpReply> screen(State& st, const std::vector<Route>& table, HttpRequest& head) {
    if (st.cors.is_preflight(head)) return st.cors.preflight(head);  // browsers send no key with a preflight
    bool path_known = false;
    const Route* route = find_route(table, head, path_known);
    if (!route) return error_reply(error_for_status(path_known ? 405 : 404, head.method, head.path));
    if (route->access == Access::Admin) {
        const std::optional<std::string_view> token = bearer_token(head.authorization);
        const std::string& admin = st.options.admin_key;
        if (admin.empty() || !token || !equal_constant_time(*token, admin)) return error_reply(unauthorized());
    }
    if (route->access == Access::Key) {
        std::optional<KeyRegistry::Caller> caller = st.keys.check(head.authorization);
        if (!caller) return error_reply(unauthorized());
        head.cache_salt = caller->cache_salt;  // the key, checked once here, picks the prefix-cache domain
        head.key_account = std::move(caller->account);  // and the limits the generation routes apply
    }
    if (!head.content_encoding.empty() && strcasecmp(head.content_encoding.c_str(), "identity") != 0) {
        return error_reply(error_for_status(415, head.method, head.path));
    }
    return std::nullopt;
}

HttpReply handle(State& st, const std::vector<Route>& table, HttpRequest& req) {
    bool path_known = false;
    const Route* route = find_route(table, req, path_known);
    if (!route) return error_reply(error_for_status(path_known ? 405 : 404, req.method, req.path));
    try {
        return route->handle(st, req);
    } catch (const std::exception&) {
        return error_reply(internal_error("Internal server error"));
    }
}

}  // namespace

ModelLookup lookup_model(const State& st, std::string_view name) {
    if (!st.ready.load()) return {nullptr, unavailable("The model is still loading")};
    ServedModelPtr m = st.models.find(name);
    if (m) return {std::move(m), std::nullopt};
    if (name.empty()) return {nullptr, unavailable("No model is loaded")};
    return {nullptr, model_not_found(std::string(name))};
}

std::string body_model(const Json& body) {
    const auto it = body.find("model");
    return it != body.end() && it->is_string() ? it->get<std::string>() : std::string();
}

HttpRoutes routes_for(State& st) {
    auto table = std::make_shared<const std::vector<Route>>(route_table(st.options));
    HttpRoutes routes;
    routes.screen = [&st, table](HttpRequest& head) {
        auto refusal = screen(st, *table, head);
        if (refusal) st.cors.decorate(head, *refusal);  // so the browser lets the page read the error
        return refusal;
    };
    routes.handle = [&st, table](HttpRequest& req) {
        HttpReply reply = handle(st, *table, req);
        st.cors.decorate(req, reply);
        return reply;
    };
    if (st.options.access_log != AccessLogFormat::Off) {
        routes.log = [format = st.options.access_log](const AccessRecord& record) {
            std::fprintf(stderr, "%s\n", format_access_line(record, format).c_str());
        };
    }
    return routes;
}

HttpServer::HttpServer(ServerOptions options) : state_(std::make_unique<State>(std::move(options))) {
    state_->started_at = static_cast<int64_t>(std::time(nullptr));
}

HttpServer::~HttpServer() { stop(); }

Expected<int> HttpServer::bind() { return state_->transport.bind(state_->options.host, state_->options.port); }

void HttpServer::serve() {
    if (!state_->stopping.load()) state_->transport.run();
}

void HttpServer::stop() {
    state_->stopping.store(true);
    state_->transport.stop();
}

void HttpServer::drain(std::chrono::milliseconds timeout) {
    State& st = *state_;
    st.draining.store(true);
    const auto wait_idle = [&st](std::chrono::milliseconds limit) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        while (st.in_flight.load() > 0 && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    };
    wait_idle(timeout);
    // Cancel what is left; streams still write their last chunk and [DONE]
    // (cancellation takes effect within one engine step), so wait for them.
    st.stopping.store(true);
    st.transport.cancel_replies();
    wait_idle(std::chrono::seconds(5));
    stop();
}

Status HttpServer::load_model(const ModelSpec& spec) { return tessera::load_model(*state_, spec); }

void HttpServer::set_ready() { state_->ready.store(true); }

ServedModelPtr HttpServer::find_model(std::string_view name) const { return state_->models.find(name); }

void HttpServer::set_api_keys(const ApiKeys& keys) { state_->keys.set(keys); }

}  // namespace tessera
