// The HTTP request and reply as the routes see them: plain data, no socket and
// no HTTP library types, so routes run on worker threads and in unit tests.
// A reply the engine produces over time (generation) carries a ReplySource
// the transport pulls from whenever the source says it has something new.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tessera {

class KeyAccount;

struct HttpRequest {
    std::string method;         // "GET", "POST", ...
    std::string path;           // the target without its query string
    std::string query;          // the query string after '?', undecoded; empty if none
    std::string authorization;  // the Authorization header, empty if absent
    std::string content_encoding;
    std::string origin;                // CORS: the Origin header, empty if absent
    std::string cors_request_headers;  // a preflight's Access-Control-Request-Headers
    std::string body;
    uint64_t cache_salt = 0;  // the API key's prefix-cache domain, set by the routes' screen
    std::shared_ptr<KeyAccount> key_account;  // the API key's limits and usage (null: no keys)
};

// What a generation reply knows about its request, for the access log.
struct ReplyUsage {
    int64_t prompt_tokens = -1;  // -1: not a generation
    int64_t completion_tokens = -1;
    std::optional<std::chrono::steady_clock::time_point> first_token;  // when the first token reached the reply
};

// A reply body produced after the route has returned. Called on the
// transport's I/O thread, except the waker, which any thread may call.
class ReplySource {
public:
    virtual ~ReplySource() = default;
    // `wake` is called whenever poll() may have something new; it may be
    // called from any thread, often more than needed.
    virtual void set_waker(std::function<void()> wake) = 0;
    // Never blocks: appends the body bytes ready now to `out`; true once the
    // body is complete (then never called again).
    virtual bool poll(std::string& out) = 0;
    // The status of a buffered reply, read once poll() has returned true.
    virtual int final_status() const { return 200; }
    // Token counts and first-token time so far (read on the I/O thread).
    virtual ReplyUsage usage() const { return {}; }
    // The client has gone or the server is stopping: wind down (the source may
    // still produce closing bytes, e.g. a stream's last chunk and [DONE]).
    virtual void cancel() = 0;
};

struct HttpReply {
    int status = 200;
    std::string content_type = "application/json";
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;
    // Set when the body comes later from the engine. streamed: the head goes
    // out at once and the source's bytes follow as chunks (SSE); else the
    // source's bytes are collected and sent as one body with final_status().
    std::shared_ptr<ReplySource> source;
    bool streamed = false;
};

// One request as the access log records it, once its reply has gone out (or
// the client went away first).
struct AccessRecord {
    std::string client;  // peer address
    std::string method;  // "-" when the request line never arrived whole
    std::string path;
    int status = 0;
    bool completed = true;  // false: the connection closed before the whole reply was sent
    ReplyUsage usage;
    std::chrono::steady_clock::time_point started;  // when the request head had arrived
    std::chrono::steady_clock::time_point finished;
};

}  // namespace tessera
