// One client connection of the HTTP transport: reads requests under the
// limits (request deadline, header bytes and fields, body bytes), hands each
// to a worker, writes the reply (whole, buffered from a source, or streamed as
// chunks), then reads the next request (keep-alive and pipelining). Lives on
// the transport's I/O thread; only wake() may be called from other threads.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/http_message.h"

namespace tessera {

struct ServerOptions;
struct HttpRoutes;
class WorkQueue;

// What a connection needs from the transport that owns it.
class ConnectionOwner {
public:
    virtual const ServerOptions& options() const = 0;
    virtual const HttpRoutes& routes() const = 0;
    virtual WorkQueue& workers() = 0;
    virtual void forget(const class HttpConnection* connection) = 0;  // the connection has closed

protected:
    ~ConnectionOwner() = default;
};

class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
public:
    HttpConnection(boost::asio::ip::tcp::socket socket, ConnectionOwner& owner, std::string client);

    const std::string& client() const { return client_; }
    void start();
    // Cancels the reply in progress, if any (server draining or stopping).
    void cancel_reply();
    // Closes the socket and tells the owner; idempotent.
    void close();

private:
    using Parser = boost::beast::http::request_parser<boost::beast::http::string_body>;
    enum class Next { Pump, ReadBody, ReadNext, Close };  // what follows a write

    void read_next();
    void on_header(boost::system::error_code ec);
    void read_body();
    void on_body(boost::system::error_code ec);
    void dispatch();
    void reply(HttpReply r, bool close_after);
    void wake();
    void pump();
    void watch_peer();
    void send(std::string bytes, Next next);
    void on_sent(boost::system::error_code ec, Next next);
    void refuse_read(boost::system::error_code ec);
    void linger_close();
    void discard_input(size_t budget);
    void release_source();
    void log_access(bool completed);
    void arm(boost::asio::steady_timer& timer, uint64_t& generation, std::chrono::milliseconds limit);

    boost::asio::ip::tcp::socket socket_;
    ConnectionOwner& owner_;
    const std::string client_;
    boost::beast::flat_buffer buffer_;
    std::optional<Parser> parser_;
    HttpRequest request_;     // the request being read or handled
    bool keep_alive_ = true;  // the current request allows another after it
    std::optional<AccessRecord> access_;  // the request being answered, until logged

    boost::asio::steady_timer read_timer_;   // the request deadline
    boost::asio::steady_timer write_timer_;  // one write's deadline
    uint64_t read_generation_ = 0;           // tells a stale timer firing from the armed one
    uint64_t write_generation_ = 0;

    std::shared_ptr<ReplySource> source_;  // a reply still being produced
    bool streamed_ = false;
    std::string collected_;  // a buffered source's body so far
    std::vector<std::pair<std::string, std::string>> source_headers_;  // the route's fields, for the buffered reply
    std::atomic<bool> wake_pending_{false};

    std::string out_;  // bytes being written
    bool writing_ = false;
    bool closed_ = false;
};

}  // namespace tessera
