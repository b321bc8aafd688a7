// The HTTP request and reply as the routes see them: plain data, no socket and
// no HTTP library types, so routes run on worker threads and in unit tests.
// A reply the engine produces over time (generation) carries a ReplySource
// the transport pulls from whenever the source says it has something new.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tessera {

struct HttpRequest {
    std::string method;         // "GET", "POST", ...
    std::string path;           // the target without its query string
    std::string authorization;  // the Authorization header, empty if absent
    std::string content_encoding;
    std::string body;
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

}  // namespace tessera
