// State shared by the HTTP server's route handlers (internal to src/server):
// options, the loaded model once there is one, the stop flag, and a random
// source for response ids and default seeds.
#pragma once

#include <httplib.h>

#include <atomic>
#include <mutex>
#include <random>

#include "server/api_error.h"
#include "server/http_server.h"
#include "server/slow_client_guard.h"

namespace tessera {

struct HttpServer::State {
    explicit State(ServerOptions opts)
        : options(std::move(opts)), slow_clients(options.request_timeout), rng(std::random_device{}()) {}

    uint64_t random_u64() {
        std::lock_guard<std::mutex> lock(rng_mu);
        return rng();
    }

    ServerOptions options;
    httplib::Server http;
    std::atomic<const ServingModel*> model{nullptr};
    std::atomic<bool> stopping{false};  // cancel in-flight generations
    std::atomic<bool> draining{false};  // refuse new generations, /ready 503
    std::atomic<int64_t> in_flight{0};  // generation requests not yet fully answered
    SlowClientGuard slow_clients;
    int64_t started_at = 0;  // unix seconds, for /v1/models

private:
    std::mutex rng_mu;
    std::mt19937_64 rng;
};

// Counts one generation request as in flight for its lifetime (a streaming
// response keeps it until the last byte is written or the client is gone).
class InFlight {
public:
    explicit InFlight(HttpServer::State& st) : st_(st) { st_.in_flight.fetch_add(1); }
    ~InFlight() { st_.in_flight.fetch_sub(1); }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;

private:
    HttpServer::State& st_;
};

// Writes a JSON body (and for 429/503 a Retry-After header).
void send_json(httplib::Response& res, int status, const Json& body);
void send_error(httplib::Response& res, const ApiError& error);

// POST /v1/chat/completions and /v1/completions, streaming or not.
void handle_generation(HttpServer::State& state, ApiKind kind, const httplib::Request& req,
                       httplib::Response& res);

}  // namespace tessera
