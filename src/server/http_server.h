// `tessera serve`'s HTTP front end: an OpenAI-compatible API (chat and text
// completions, models), llama-server style /tokenize, /detokenize and /props,
// and the operational endpoints /health, /ready and /metrics, over the event-driven
// transport of http_transport.h.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "server/access_log.h"
#include "server/api_keys.h"
#include "server/model_registry.h"
#include "server/openai_request.h"

namespace tessera {

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 8080;                          // 0: any free port
    int http_threads = 4;                     // workers running the routes (parse, template, tokenize)
    size_t max_body_bytes = size_t{8} << 20;  // larger bodies get a 413, whatever their framing
    size_t max_headers = 100;                 // more request header fields get a 431
    size_t max_header_bytes = 16384;          // a longer request head gets a 431
    int64_t max_connections = 16384;          // open connections; past it new ones get a 503
    int64_t max_client_connections = 1024;    // open connections from one address; 0: no cap
    // Each request (headers and body) must arrive within this long of the
    // connection opening or of its previous response; 0: no deadline.
    std::chrono::milliseconds request_timeout{30000};
    std::chrono::milliseconds io_timeout{5000};  // one write to a client (a stalled reader is dropped)
    // Models served at once (started with, plus loaded through POST /admin/models).
    size_t max_models = 8;
    // Loads a model for POST /admin/models (and HttpServer::load_model).
    ModelLoader loader;
    std::vector<std::string> cors_origins;  // browser origins allowed ("*": any); empty: no CORS
    AccessLogFormat access_log = AccessLogFormat::Text;
    bool web_ui = true;  // the chat page at /
    ProtocolLimits limits;
    ApiKeys api_keys;
    // --admin-key: the /admin/* routes exist only with one, and take only it
    // (an API key never opens them, nor the admin key the API routes).
    std::string admin_key;
};

class HttpServer {
public:
    explicit HttpServer(ServerOptions options);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    // Binds the listening socket; returns the bound port.
    Expected<int> bind();
    // Serves until stop() is called (from any thread). Requires bind().
    void serve();
    // Thread-safe: cancels in-flight generations and makes serve() return.
    void stop();
    // Thread-safe graceful shutdown: /ready and new generation requests get
    // 503 at once; in-flight requests may finish for up to `timeout`, then the
    // rest are cancelled (streams still end with a finish_reason and [DONE]),
    // and serve() returns.
    void drain(std::chrono::milliseconds timeout);
    // Loads `spec` with the options' loader and serves it (after the models
    // already served). Errors: a name in use, the cap, or the loader's.
    Status load_model(const ModelSpec& spec);
    // Opens the model routes and turns /ready green once every model is
    // ready. Until then they answer 503 (the models are loading).
    void set_ready();
    // The model serving `name` (empty: the first); null when none does.
    ServedModelPtr find_model(std::string_view name) const;
    // Thread-safe: replaces the accepted API keys (a key file reload). Requests
    // in flight go on; a key whose name stays keeps its usage and limit state.
    void set_api_keys(const ApiKeys& keys);

    struct State;

private:
    std::unique_ptr<State> state_;
};

}  // namespace tessera
