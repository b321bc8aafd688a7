// State shared by the HTTP server's route handlers (internal to src/server):
// options, the served models, the drain and stop flags, the transport, and a
// random source for response ids and default seeds.
#pragma once

#include <atomic>
#include <mutex>
#include <random>

#include "server/api_error.h"
#include "server/cors.h"
#include "server/http_message.h"
#include "server/http_server.h"
#include "server/http_transport.h"
#include "server/key_registry.h"

namespace tessera {

// The route table over a server's state (http_server.cpp).
HttpRoutes routes_for(HttpServer::State& state);

// The model a request names (empty: the first served), or why there is none:
// 503 while the models load, 404 (model_not_found) for a name not served.
struct ModelLookup {
    ServedModelPtr model;
    std::optional<ApiError> error;
};
ModelLookup lookup_model(const HttpServer::State& state, std::string_view name);
// A request body's "model" field when it is a string; empty otherwise (a
// wrong type is reported by the request's own parser).
std::string body_model(const Json& body);

struct HttpServer::State {
    explicit State(ServerOptions opts)
        : options(std::move(opts)), keys(options.api_keys), cors(options.cors_origins), models(options.max_models),
          transport(options, routes_for(*this)), rng(std::random_device{}()) {}

    uint64_t random_u64() {
        std::lock_guard<std::mutex> lock(rng_mu);
        return rng();
    }

    ServerOptions options;
    KeyRegistry keys;  // the live API keys (options.api_keys until a reload)
    CorsPolicy cors;
    ModelRegistry models;             // declared before the transport: replies die first
    std::atomic<bool> ready{false};   // the startup models are loaded
    std::atomic<bool> stopping{false};  // cancel in-flight generations
    std::atomic<bool> draining{false};  // refuse new generations, /ready 503
    std::atomic<int64_t> in_flight{0};  // generation requests not yet fully answered
    int64_t started_at = 0;             // unix seconds, for /v1/models
    HttpTransport transport;

private:
    std::mutex rng_mu;
    std::mt19937_64 rng;
};

// Counts one generation request as in flight for its lifetime (a streaming
// response keeps it until the last byte is produced or the client is gone).
class InFlight {
public:
    explicit InFlight(HttpServer::State& st) : st_(st) { st_.in_flight.fetch_add(1); }
    ~InFlight() { st_.in_flight.fetch_sub(1); }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;

private:
    HttpServer::State& st_;
};

// POST /v1/chat/completions and /v1/completions, streaming or not.
HttpReply handle_generation(HttpServer::State& state, ApiKind kind, const HttpRequest& req);
// POST /v1/responses (responses_route.cpp).
HttpReply handle_responses(HttpServer::State& state, const HttpRequest& req);
// POST /v1/embeddings (embeddings_route.cpp).
HttpReply handle_embeddings(HttpServer::State& state, const HttpRequest& req);

// Reserves the spec's names, runs the loader on this thread and serves the
// model (admin_routes.cpp); the other models serve on meanwhile.
Status load_model(HttpServer::State& state, const ModelSpec& spec);
// GET, POST /admin/models and DELETE /admin/models/{name} (admin_routes.cpp).
HttpReply handle_admin_list(HttpServer::State& state);
HttpReply handle_admin_load(HttpServer::State& state, const HttpRequest& req);
HttpReply handle_admin_unload(HttpServer::State& state, const HttpRequest& req);

}  // namespace tessera
