// Route table, authentication, error bodies and the small endpoints of the
// HTTP server; generation lives in generation_route.cpp.
#include "server/http_server.h"

#include <sys/socket.h>

#include <ctime>
#include <functional>
#include <thread>
#include <utility>

#include "server/field_reader.h"
#include "server/process_sockets.h"
#include "server/prometheus.h"
#include "server/server_state.h"

namespace tessera {
namespace {

using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
using State = HttpServer::State;

constexpr int kListenBacklog = 4096;

// Every route goes through this: the request has fully arrived (the
// slow-client deadline stops while it is handled) and its header count is checked.
Handler guarded(State& st, Handler inner) {
    return [&st, inner = std::move(inner)](const httplib::Request& req, httplib::Response& res) {
        st.slow_clients.request_started(req.remote_addr, req.remote_port);
        if (req.headers.size() > st.options.max_headers) {
            return send_error(res, ApiError{431, "Too many request header fields (at most " +
                                                     std::to_string(st.options.max_headers) + ")",
                                            "invalid_request_error", "", "headers_too_large"});
        }
        inner(req, res);
    };
}

// Every route but /health requires the API key (when keys are configured).
// Checked inside the handler, after httplib has read the body, so a refused
// request leaves the keep-alive connection usable.
Handler authed(State& st, Handler inner) {
    return [&st, inner = std::move(inner)](const httplib::Request& req, httplib::Response& res) {
        if (!st.options.api_keys.check(req.get_header_value("Authorization"))) {
            return send_error(res, unauthorized());
        }
        inner(req, res);
    };
}

void handle_ready(State& st, httplib::Response& res) {
    const ServingModel* m = st.model.load();
    if (!m) return send_error(res, unavailable("The model is still loading"));
    if (st.draining.load()) return send_error(res, unavailable("The server is shutting down"));
    if (!m->engine->healthy()) return send_error(res, unavailable("The engine is not making progress"));
    send_json(res, 200, {{"status", "ready"}});
}

void handle_models(State& st, httplib::Response& res) {
    Json model = {{"id", st.options.model_name}, {"object", "model"}, {"created", st.started_at},
                  {"owned_by", "tessera"}};
    if (const ServingModel* m = st.model.load()) model["max_model_len"] = m->engine->max_context();
    send_json(res, 200, {{"object", "list"}, {"data", Json::array({model})}});
}

void handle_metrics(State& st, httplib::Response& res) {
    const ServingModel* m = st.model.load();
    if (!m) return send_error(res, unavailable("The model is still loading"));
    res.status = 200;
    res.set_content(render_prometheus(m->engine->metrics()), "text/plain; version=0.0.4; charset=utf-8");
}

Json tokens_json(const std::vector<int32_t>& ids, const Tokenizer& tok, bool with_pieces) {
    Json out = Json::array();
    for (int32_t id : ids) {
        if (with_pieces) {
            out.push_back({{"id", id}, {"piece", tok.token_to_piece(id, true)}});
        } else {
            out.push_back(id);
        }
    }
    return out;
}

void handle_tokenize(State& st, const httplib::Request& req, httplib::Response& res) {
    const ServingModel* m = st.model.load();
    if (!m) return send_error(res, unavailable("The model is still loading"));
    Json body;
    if (auto err = parse_json_object(req.body, st.options.limits.max_json_depth, body)) return send_error(res, *err);
    FieldReader r(body);
    std::string content;
    bool add_special = false, parse_special = true, with_pieces = false;
    if (!r.find("content")) r.fail(bad_request("content", "'content' is required"));
    r.string("content", content);
    r.boolean("add_special", add_special);
    r.boolean("parse_special", parse_special);
    r.boolean("with_pieces", with_pieces);
    if (!r.ok()) return send_error(res, *r.error());
    const Tokenizer& tok = m->engine->tokenizer();
    send_json(res, 200, {{"tokens", tokens_json(tok.encode(content, add_special, parse_special), tok, with_pieces)}});
}

void handle_detokenize(State& st, const httplib::Request& req, httplib::Response& res) {
    const ServingModel* m = st.model.load();
    if (!m) return send_error(res, unavailable("The model is still loading"));
    Json body;
    if (auto err = parse_json_object(req.body, st.options.limits.max_json_depth, body)) return send_error(res, *err);
    const Tokenizer& tok = m->engine->tokenizer();
    const auto it = body.find("tokens");
    if (it == body.end() || !it->is_array()) return send_error(res, bad_request("tokens", "'tokens' must be a list"));
    std::vector<int32_t> ids;
    for (const Json& t : *it) {
        auto id = json_to_int(t, 0, tok.n_vocab() - 1);
        if (!id) {
            return send_error(res, bad_request("tokens", "token ids must be integers in [0, " +
                                                             std::to_string(tok.n_vocab()) + ")"));
        }
        ids.push_back(static_cast<int32_t>(*id));
    }
    send_json(res, 200, {{"content", tok.decode(ids)}});
}

// Wrong method on a known path: 405 instead of httplib's bare 404.
void add_method_not_allowed(State& st, const std::string& path, bool has_get, bool has_post) {
    httplib::Server& http = st.http;
    auto reject = guarded(st, [](const httplib::Request& req, httplib::Response& res) {
        send_error(res, error_for_status(405, req.method, req.path));
    });
    if (!has_get) http.Get(path, reject);
    if (!has_post) http.Post(path, reject);
    http.Put(path, reject);
    http.Patch(path, reject);
    http.Delete(path, reject);
}

void add_routes(State& st) {
    httplib::Server& http = st.http;
    auto gen = [&st](ApiKind kind) {
        return [&st, kind](const httplib::Request& q, httplib::Response& r) { handle_generation(st, kind, q, r); };
    };
    const auto post = [&](const char* path, Handler h) { http.Post(path, guarded(st, authed(st, std::move(h)))); };
    const auto get = [&](const char* path, Handler h) { http.Get(path, guarded(st, authed(st, std::move(h)))); };
    post("/v1/chat/completions", gen(ApiKind::Chat));
    post("/v1/completions", gen(ApiKind::Completion));
    get("/v1/models", [&st](const httplib::Request&, httplib::Response& r) { handle_models(st, r); });
    post("/tokenize", [&st](const httplib::Request& q, httplib::Response& r) { handle_tokenize(st, q, r); });
    post("/detokenize", [&st](const httplib::Request& q, httplib::Response& r) { handle_detokenize(st, q, r); });
    http.Get("/health", guarded(st, [](const httplib::Request&, httplib::Response& r) {
                 send_json(r, 200, {{"status", "ok"}});
             }));
    get("/ready", [&st](const httplib::Request&, httplib::Response& r) { handle_ready(st, r); });
    get("/metrics", [&st](const httplib::Request&, httplib::Response& r) { handle_metrics(st, r); });
    for (const char* p : {"/v1/chat/completions", "/v1/completions", "/tokenize", "/detokenize"}) {
        add_method_not_allowed(st, p, false, true);
    }
    for (const char* p : {"/v1/models", "/health", "/ready", "/metrics"}) add_method_not_allowed(st, p, true, false);
}

void configure(State& st) {
    httplib::Server& http = st.http;
    const int threads = st.options.http_threads;
    http.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
    http.set_payload_max_length(st.options.max_body_bytes);
    // httplib writes a response's headers and body with separate send()s; with
    // Nagle on, the body waits for the client's delayed ACK (~40 ms each).
    http.set_tcp_nodelay(true);
    http.set_read_timeout(st.options.io_timeout);
    http.set_write_timeout(st.options.io_timeout);
    // Called once a response has been written: the connection's next request
    // (keep-alive) gets a fresh slow-client deadline.
    http.set_logger([&st](const httplib::Request& req, const httplib::Response&) {
        st.slow_clients.response_written(req.remote_addr, req.remote_port);
    });
    // Bodies httplib refuses itself (404, 413, malformed requests) get OpenAI error JSON too.
    http.set_error_handler(
        httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
            if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
            send_error(res, error_for_status(res.status, req.method, req.path));
            return httplib::Server::HandlerResponse::Handled;
        }));
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        send_error(res, internal_error("Internal server error"));
    });
    add_routes(st);
}

}  // namespace

void send_json(httplib::Response& res, int status, const Json& body) {
    res.status = status;
    if (status == 429 || status == 503) res.set_header("Retry-After", "1");
    res.set_content(dump_json(body), "application/json");
}

void send_error(httplib::Response& res, const ApiError& error) {
    send_json(res, error.http_status, error.to_json());
}

HttpServer::HttpServer(ServerOptions options) : state_(std::make_unique<State>(std::move(options))) {
    state_->started_at = static_cast<int64_t>(std::time(nullptr));
    configure(*state_);
}

HttpServer::~HttpServer() { stop(); }

Expected<int> HttpServer::bind() {
    const ServerOptions& o = state_->options;
    int port = o.port;
    if (o.port == 0) {
        port = state_->http.bind_to_any_port(o.host);
        if (port <= 0) return Status::error("cannot listen on " + o.host);
    } else if (!state_->http.bind_to_port(o.host, o.port)) {
        return Status::error("cannot listen on " + o.host + ":" + std::to_string(o.port));
    }
    // Debian's cpp-httplib is a compiled library that listens with a backlog
    // of 5: a burst of new connections (32 clients at once) overflowed it and
    // the kernel dropped their handshakes until SYN retries a second or more
    // later. listen() again on the bound socket raises it (capped by
    // net.core.somaxconn).
    const int listening = find_listening_socket(port);
    if (listening >= 0) ::listen(listening, kListenBacklog);
    state_->slow_clients.start(port);
    return port;
}

void HttpServer::serve() {
    if (!state_->stopping.load()) state_->http.listen_after_bind();
}

void HttpServer::stop() {
    state_->stopping.store(true);
    state_->http.stop();
    state_->slow_clients.stop();
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
    // Cancel what is left. Streams then write their final chunk and [DONE];
    // httplib stops writing chunked responses once it is stopped, so wait for
    // them first (cancellation takes effect within one engine step).
    st.stopping.store(true);
    wait_idle(std::chrono::seconds(5));
    stop();
}

void HttpServer::set_model(const ServingModel* model) { state_->model.store(model); }

}  // namespace tessera
