// State shared by the HTTP server's route handlers (internal to src/server):
// options, the loaded model once there is one, the drain and stop flags, the
// transport, and a random source for response ids and default seeds.
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
// True when `name` is one the model is served under.
bool serves_model(const HttpServer::State& state, const std::string& name);

struct HttpServer::State {
    explicit State(ServerOptions opts)
        : options(std::move(opts)), keys(options.api_keys), cors(options.cors_origins),
          transport(options, routes_for(*this)),
          rng(std::random_device{}()) {
        if (options.model_names.empty()) options.model_names = {"tessera"};  // routes need a name to answer with
    }

    uint64_t random_u64() {
        std::lock_guard<std::mutex> lock(rng_mu);
        return rng();
    }

    ServerOptions options;
    KeyRegistry keys;  // the live API keys (options.api_keys until a reload)
    CorsPolicy cors;
    std::atomic<const ServingModel*> model{nullptr};
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

}  // namespace tessera
