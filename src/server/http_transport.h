// The HTTP/1.1 transport of `tessera serve`, event-driven on Boost.Asio/Beast:
// one I/O thread owns every socket (an idle or slow connection costs a socket
// and a small buffer, never a thread), a few worker threads run the routes.
// Limits apply before work: header bytes and fields while the head is read,
// the route's screen (method, path, API key, encoding) before any body byte,
// the body limit on the bytes as read for every framing.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/status.h"
#include "server/http_message.h"

namespace tessera {

struct ServerOptions;

struct HttpRoutes {
    // After the head, before the body is read: a reply refuses the request.
    // What it learns from the head (the API key's cache salt) it records there.
    std::function<std::optional<HttpReply>(HttpRequest& head)> screen;
    // The whole request, on a worker thread.
    std::function<HttpReply(HttpRequest& request)> handle;
    // Each request once answered (or abandoned), on the I/O thread; may be empty.
    std::function<void(const AccessRecord& record)> log;
};

class HttpTransport {
public:
    HttpTransport(const ServerOptions& options, HttpRoutes routes);
    ~HttpTransport();
    HttpTransport(const HttpTransport&) = delete;
    HttpTransport& operator=(const HttpTransport&) = delete;

    // Binds and listens; returns the bound port.
    Expected<int> bind(const std::string& host, int port);
    // Serves on the calling thread until stop(); the workers are joined
    // before it returns.
    void run();
    // Thread-safe: closes every connection and makes run() return.
    void stop();
    // Thread-safe: cancels every reply the engine is still producing (they
    // end as their sources decide, e.g. a stream's last chunk and [DONE]).
    void cancel_replies();

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace tessera
