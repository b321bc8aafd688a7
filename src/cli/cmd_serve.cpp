// `tessera serve`: binds the HTTP server first (so /health and /ready answer
// while the models load), loads each model with its engine, and serves until
// SIGINT or SIGTERM, then drains in-flight requests and shuts down cleanly;
// SIGHUP reloads the API key file.
#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <thread>

#include "cli/chat_session.h"
#include "cli/commands.h"
#include "cli/kv_type_flags.h"
#include "cli/serve_models.h"
#include "kernels/dot_kernels.h"
#include "template/builtin_templates.h"
#include "server/http_server.h"

namespace tessera {
namespace {

struct ServeFlags {
    ServeModelFlags models;
    std::string log_format = "text";
    std::string pooling;  // embeddings; empty: the model's (model/pooling.h)
    bool access_log = true;
    std::string api_key;
    std::string api_key_file;
    ServerOptions server;
    EngineOptions engine;
    SpecFlags spec;
    double drain_timeout_s = 30;
    double request_timeout_s = 30;
    int io_timeout_s = 5;
    int cache_ttl_default_s = 300;
    int cache_ttl_max_s = 3600;
    int cache_system_prompt_s = 0;
};

// Prompt caching with a TTL (cache_control markers, server/cache_control.h).
void add_cache_ttl_flags(CLI::App& app, ServeFlags& f) {
    app.add_option("--cache-ttl-default", f.cache_ttl_default_s, "seconds a cache_control marker without a ttl keeps its prompt")
        ->check(CLI::Range(1, 1 << 30));
    app.add_option("--cache-ttl-max", f.cache_ttl_max_s, "longest cache_control ttl a request may ask for, in seconds")
        ->check(CLI::Range(1, 1 << 30));
    app.add_option("--cache-system-prompt", f.cache_system_prompt_s,
                   "keep every chat request's leading system messages cached this many seconds (0: off)")
        ->check(CLI::Range(0, 1 << 30));
    app.add_option("--cache-pin-share", f.engine.max_pinned_share,
                   "share of the KV cache that prompts kept by cache_control may hold together")
        ->check(CLI::Range(0.0, 1.0));
}

void apply_cache_ttls(ServeFlags& f) {
    CacheControlOptions& c = f.server.limits.cache_control;
    c.default_ttl = std::chrono::seconds(std::min(f.cache_ttl_default_s, f.cache_ttl_max_s));
    c.max_ttl = std::chrono::seconds(f.cache_ttl_max_s);
    c.system_prompt_ttl = std::chrono::seconds(std::min(f.cache_system_prompt_s, f.cache_ttl_max_s));
}

void add_flags(CLI::App& app, ServeFlags& f) {
    EngineOptions& e = f.engine;
    ServerOptions& s = f.server;
    app.add_option("-m,--model", f.models.models,
                   "GGUF model file, served under its file name; NAME=FILE serves it as NAME (repeatable)");
    app.add_option("--models-file", f.models.models_file,
                   "JSON list of models to serve: {name, path, aliases, ctx_size, kv_memory, draft_model, "
                   "chat_template} (docs/API.md)");
    app.add_option("--max-models", s.max_models, "models served at once, --admin-key loads included (default 8)")
        ->check(CLI::Range(size_t{1}, size_t{256}));
    f.spec.add_to(app);
    app.add_option("--host", s.host, "address to listen on (default 127.0.0.1)");
    app.add_option("--port", s.port, "port to listen on (0: any free port)")->check(CLI::Range(0, 65535));
    auto* key = app.add_option("--api-key", f.api_key, "require 'Authorization: Bearer KEY'");
    app.add_option("--api-key-file", f.api_key_file,
                   "file of accepted API keys, one per line, each optionally with name=, rpm=, tpm=, streams=, "
                   "group= (reloaded on SIGHUP)")
        ->excludes(key);
    app.add_option("--admin-key", s.admin_key, "require 'Authorization: Bearer KEY' on the /admin/* routes (none without it)")
        ->check([](const std::string& k) { return k.empty() ? std::string("the admin key must not be empty") : ""; });
    app.add_option("--served-model-name,--alias,--model-name", f.models.served_names,
                   "names the first model is served under; the first is listed first, requests naming no model "
                   "get it (default: the file name without .gguf)");
    app.add_option("--chat-template", f.models.chat_template,
                   "chat template: a Jinja file, or a built-in name (" + builtin_chat_template_names() +
                       "); default: the model's own (for --model models; a models file names its own)");
    app.add_option("--cors-origin", s.cors_origins,
                   "allow browser pages from this origin (repeatable; '*': any) and answer CORS preflights");
    app.add_option("--log-format", f.log_format, "access log: one line per request, text or json")
        ->check(CLI::IsMember({"text", "json"}));
    app.add_flag("!--no-access-log", f.access_log, "no access log lines");
    app.add_option("--pooling", f.pooling,
                   "/v1/embeddings pooling: mean, cls or last (default: the model's pooling_type, else last)")
        ->check(CLI::IsMember({"mean", "cls", "last"}));
    app.add_flag("!--no-webui", s.web_ui, "no chat page at /");
    app.add_option("-c,--ctx-size", e.ctx_size, "KV cache size in tokens (when --kv-memory is not set)")
        ->check(CLI::Range(int64_t{16}, int64_t{1} << 24));
    app.add_option("--kv-memory", e.kv_memory_bytes, "KV cache budget in bytes, e.g. 512M or 2G")
        ->transform(CLI::AsSizeValue(false));
    add_kv_type_flags(app, e.kv_types);
    app.add_flag("--swa-full", e.swa_full, kSwaFullHelp);
    app.add_option("--max-context", e.max_context, "per-request token limit (0: the model's training context)")
        ->check(CLI::Range(int64_t{0}, int64_t{1} << 24));
    app.add_option("--max-batch-tokens", e.max_batch_tokens, "token budget per engine step")
        ->check(CLI::Range(1, 1 << 20));
    app.add_option("--prefill-share", e.prefill_share,
                   "prefill tokens per step each prompt gets before any gets more (0: FCFS; default: budget / 4)")
        ->check(CLI::Range(0, 1 << 20));
    app.add_option("--max-seqs", e.max_seqs, "running sequences per step")->check(CLI::Range(1, 4096));
    app.add_option("--max-waiting", e.max_waiting, "waiting requests before new ones get 429")
        ->check(CLI::Range(0, 1 << 20));
    app.add_flag("!--no-prefix-cache", e.prefix_cache, "disable the prefix cache");
    add_cache_ttl_flags(app, f);
    app.add_option("--kv-disk", e.kv_disk_dir,
                   "directory of the KV disk tier: prefix-cache blocks evicted from RAM spill there, come back on a "
                   "hit, and survive a restart");
    app.add_option("--kv-disk-size", e.kv_disk_bytes, "disk tier size in bytes, e.g. 4G (default 1G)")
        ->transform(CLI::AsSizeValue(false));
    app.add_option("-t,--threads", e.threads, "compute threads (0: all cores)")->check(CLI::Range(0, 1024));
    app.add_option("--block-size", e.block_size, "KV block size in tokens")->check(CLI::Range(1, 1024));
    app.add_option("--http-threads", s.http_threads,
                   "threads running request handlers (parsing, templates, tokenizing); connections need none")
        ->check(CLI::Range(1, 256));
    app.add_option("--max-body-bytes", s.max_body_bytes, "largest accepted request body, e.g. 8M")
        ->transform(CLI::AsSizeValue(false));
    app.add_option("--max-headers", s.max_headers, "request header fields before a 431")
        ->check(CLI::Range(1, 10000));
    app.add_option("--max-header-bytes", s.max_header_bytes, "largest request head (line and headers), e.g. 16K")
        ->transform(CLI::AsSizeValue(false))
        ->check(CLI::Range(size_t{1024}, size_t{1} << 20));
    app.add_option("--max-connections", s.max_connections, "open connections before new ones get a 503")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
    app.add_option("--max-client-connections", s.max_client_connections,
                   "open connections from one client address (0: no cap)")
        ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
    app.add_option("--max-response-tokens", s.limits.max_response_tokens,
                   "largest n x max_tokens x (top_logprobs + 1) of a non-streamed response")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
    app.add_option("--grammar-max-bytes", s.limits.grammar.max_source_bytes,
                   "largest grammar or JSON Schema a request may constrain its output with")
        ->check(CLI::Range(size_t{1}, size_t{64} << 20));
    app.add_option("--grammar-max-compile-time", s.limits.grammar.max_compile_seconds,
                   "seconds a request's grammar or JSON Schema may take to compile before a 400")
        ->check(CLI::Range(0.001, 3600.0));
    app.add_option("--grammar-table-budget", s.limits.grammar.table_build_seconds,
                   "seconds spent prebuilding a new grammar's token tables before its request runs (the rest are "
                   "built while decoding)")
        ->check(CLI::Range(0.0, 3600.0));
    app.add_option("--grammar-cache-size", s.limits.grammar_cache_bytes,
                   "memory for compiled grammars and their token tables, shared by requests with the same schema "
                   "or grammar, e.g. 256M (0: none kept)")
        ->transform(CLI::AsSizeValue(false));
    const std::map<std::string, EngineOptions::MaskThread> mask_threads{
        {"auto", EngineOptions::MaskThread::Auto}, {"on", EngineOptions::MaskThread::On},
        {"off", EngineOptions::MaskThread::Off}};
    app.add_option("--grammar-mask-thread", e.mask_thread,
                   "compute grammar masks on a thread of their own while the forward pass runs: on, off, or auto "
                   "(when the compute threads leave a core free; default)")
        ->transform(CLI::CheckedTransformer(mask_threads, CLI::ignore_case));
    app.add_option("--request-timeout", f.request_timeout_s,
                   "seconds a connection has to send each whole request (0: no limit)")
        ->check(CLI::Range(0.0, 86400.0));
    app.add_option("--io-timeout", f.io_timeout_s, "seconds one write to a client may take")
        ->check(CLI::Range(1, 3600));
    app.add_option("--drain-timeout", f.drain_timeout_s,
                   "on SIGTERM/SIGINT, seconds in-flight requests may take to finish")
        ->check(CLI::Range(0.0, 86400.0));
}

void apply_log_format(ServeFlags& f) {
    if (!f.access_log) f.server.access_log = AccessLogFormat::Off;
    else f.server.access_log = f.log_format == "json" ? AccessLogFormat::Json : AccessLogFormat::Text;
}

void apply_pooling(ServeFlags& f) {
    if (!f.pooling.empty()) f.engine.pooling = *parse_pooling(f.pooling);  // CLI checked the name
}

void apply_timeouts(ServeFlags& f) {
    using std::chrono::duration_cast;
    using std::chrono::milliseconds;
    f.server.request_timeout = duration_cast<milliseconds>(std::chrono::duration<double>(f.request_timeout_s));
    f.server.io_timeout = std::chrono::seconds(f.io_timeout_s);
}

bool load_api_keys(ServeFlags& f) {
    if (!f.api_key.empty()) f.server.api_keys = ApiKeys({f.api_key});
    if (f.api_key_file.empty()) return true;
    auto keys = ApiKeys::from_file(f.api_key_file);
    if (!keys) {
        std::fprintf(stderr, "tessera serve: %s\n", keys.error().c_str());
        return false;
    }
    f.server.api_keys = std::move(*keys);
    return true;
}

// SIGHUP: the key file again; a file that does not parse leaves the old keys
// serving. Streams in flight are untouched either way.
void reload_api_keys(const std::string& path, HttpServer& server) {
    if (path.empty()) {
        std::fprintf(stderr, "tessera serve: SIGHUP: no --api-key-file to reload\n");
        return;
    }
    auto keys = ApiKeys::from_file(path);
    if (!keys) {
        std::fprintf(stderr, "tessera serve: SIGHUP: keeping the current API keys: %s\n", keys.error().c_str());
        return;
    }
    server.set_api_keys(*keys);
    std::fprintf(stderr, "tessera serve: SIGHUP: reloaded %zu API keys from '%s'\n", keys->size(), path.c_str());
}

// Waits for SIGINT/SIGTERM (blocked in every thread, so only this one sees
// them) and drains the server; on SIGHUP calls `reload` and waits again. The
// destructor ends the wait without draining.
class SignalWatcher {
public:
    SignalWatcher(HttpServer& server, double drain_timeout_s, std::function<void()> reload)
        : thread_([this, &server, drain_timeout_s, reload = std::move(reload)] {
              int sig = 0;
              while (sigwait(&set_, &sig) == 0 && sig == SIGHUP && !woken_.load()) reload();
              if (woken_.load()) return server.stop();
              std::fprintf(stderr, "tessera serve: signal %d, draining (up to %g s)\n", sig, drain_timeout_s);
              server.drain(std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::duration<double>(drain_timeout_s)));
              std::fprintf(stderr, "tessera serve: shutting down\n");
          }) {}
    ~SignalWatcher() {
        woken_.store(true);
        pthread_kill(thread_.native_handle(), SIGTERM);
        thread_.join();
    }
    static sigset_t blocked() {
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGINT);
        sigaddset(&s, SIGTERM);
        sigaddset(&s, SIGHUP);
        return s;
    }

private:
    sigset_t set_ = blocked();
    std::atomic<bool> woken_{false};
    std::thread thread_;
};

// What a user checks first: which model and kernels, how much context and KV.
void print_model(const ServedModel& served) {
    const Engine& engine = *served.engine;
    const ModelConfig& c = engine.model_config();
    const EngineMetrics& m = engine.metrics();
    const EngineOptions& o = engine.options();
    std::fprintf(stderr, "tessera serve: model %s (%s, %d layers, served as '%s')\n", served.spec.path.c_str(),
                 c.arch.c_str(), c.n_layer, served.name().c_str());
    std::fprintf(stderr,
                 "tessera serve: context %lld tokens per request; KV cache %lld tokens (%lld blocks of %lld, K %s, "
                 "V %s), prefix cache %s; up to %d sequences per step\n",
                 static_cast<long long>(engine.max_context()),
                 static_cast<long long>(m.kv_blocks_total.load() * m.kv_block_size.load()),
                 static_cast<long long>(m.kv_blocks_total.load()), static_cast<long long>(m.kv_block_size.load()),
                 kv_type_name(o.kv_types.k).c_str(), kv_type_name(o.kv_types.v).c_str(),
                 o.prefix_cache ? "on" : "off", o.max_seqs);
    if (m.kv_window_blocks_total.load() > 0) {
        std::fprintf(stderr, "tessera serve: sliding-window layers: %lld blocks of their own (%d sequences' windows)\n",
                     static_cast<long long>(m.kv_window_blocks_total.load()), o.max_seqs);
    }
    if (!o.kv_disk_dir.empty()) {
        std::fprintf(stderr, "tessera serve: KV disk tier in %s: %lld blocks found, %lld MiB at most\n",
                     o.kv_disk_dir.c_str(), static_cast<long long>(m.kv_disk_blocks.load()),
                     static_cast<long long>(m.kv_disk_bytes_capacity.load() >> 20));
    }
}

void print_startup(const EngineOptions& o) {
    const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::fprintf(stderr, "tessera serve: kernels %s, %d compute threads; models loaded, ready\n",
                 simd_level_name(best_simd_level()), threads);
}

// Loads the startup models and serves until the server stops. Returns the exit code.
int load_and_serve(ServeFlags& f, HttpServer& server, std::thread& serving) {
    auto specs = startup_model_specs(f.models, f.spec);
    if (!specs) {
        std::fprintf(stderr, "tessera serve: %s\n", specs.error().c_str());
        return 2;
    }
    for (const ModelSpec& spec : *specs) {
        if (Status st = server.load_model(spec); !st.ok()) {
            std::fprintf(stderr, "tessera serve: model '%s' (%s): %s\n", spec.name.c_str(), spec.path.c_str(),
                         st.message().c_str());
            return 1;
        }
        if (const ServedModelPtr m = server.find_model(spec.name)) print_model(*m);
    }
    server.set_ready();
    print_startup(f.engine);
    serving.join();  // until stop(); the models go with the server, after its HTTP threads
    return 0;
}

}  // namespace

int cmd_serve(int argc, char** argv) {
    CLI::App app{"OpenAI-compatible HTTP server", "serve"};
    ServeFlags f;
    add_flags(app, f);
    if (auto code = parse_args(app, argc, argv)) return *code;
    if (!load_api_keys(f)) return 2;
    apply_timeouts(f);
    apply_log_format(f);
    apply_pooling(f);
    apply_cache_ttls(f);
    f.server.loader = serve_model_loader(f.engine, f.spec, f.server.limits.grammar_cache_bytes);

    // glibc raises its mmap threshold each time a large block is freed, so
    // after one big request later ones come from the heap and stay resident
    // (a 6 MB /tokenize left 70 MB behind). A fixed 1 MiB threshold keeps
    // large buffers in their own mappings, returned to the system on free.
    mallopt(M_MMAP_THRESHOLD, 1 << 20);

    const sigset_t blocked = SignalWatcher::blocked();
    pthread_sigmask(SIG_BLOCK, &blocked, nullptr);  // before any thread starts
    signal(SIGPIPE, SIG_IGN);                       // a vanished client is an error value, not a kill

    HttpServer server(f.server);
    auto port = server.bind();
    if (!port) {
        std::fprintf(stderr, "tessera serve: %s\n", port.error().c_str());
        return 1;
    }
    std::fprintf(stderr, "tessera serve: listening on http://%s:%d\n", f.server.host.c_str(), *port);
    std::thread serving([&server] { server.serve(); });
    SignalWatcher watcher(server, f.drain_timeout_s, [&f, &server] { reload_api_keys(f.api_key_file, server); });
    const int code = load_and_serve(f, server, serving);
    if (serving.joinable()) {  // loading failed
        server.stop();
        serving.join();
    }
    return code;
}

}  // namespace tessera
