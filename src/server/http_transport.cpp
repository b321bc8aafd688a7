// The listening side of the transport: accepting under the connection caps,
// the registry of open connections, the I/O thread and the workers.
#include "server/http_transport.h"

#include <sys/resource.h>
#include <sys/socket.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "server/api_error.h"
#include "server/http_connection.h"
#include "server/http_server.h"
#include "server/work_queue.h"

namespace tessera {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

constexpr int kListenBacklog = 4096;  // a burst of clients connecting at once all get their handshake
constexpr int kReservedFds = 64;      // model file, logs, the engine's own

// Raises the open-file limit to what the system allows: each connection is a
// descriptor, and Debian's default soft limit (1024) would cap the server far
// below its --max-connections. Returns the limit in force.
int64_t raise_fd_limit() {
    rlimit lim{};
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 1024;
    if (lim.rlim_cur < lim.rlim_max) {
        lim.rlim_cur = lim.rlim_max;
        setrlimit(RLIMIT_NOFILE, &lim);
        getrlimit(RLIMIT_NOFILE, &lim);
    }
    return static_cast<int64_t>(lim.rlim_cur);
}

}  // namespace

struct HttpTransport::Impl final : ConnectionOwner {
    Impl(const ServerOptions& o, HttpRoutes r)
        : opts(o), handlers(std::move(r)), acceptor(io), retry_timer(io), work(o.http_threads) {}

    const ServerOptions& options() const override { return opts; }
    const HttpRoutes& routes() const override { return handlers; }
    WorkQueue& workers() override { return work; }

    void forget(const HttpConnection* c) override {
        if (open.erase(c) == 0) return;
        auto it = per_client.find(c->client());
        if (it != per_client.end() && --it->second <= 0) per_client.erase(it);
    }

    void accept() {
        acceptor.async_accept([this](error_code ec, tcp::socket socket) {
            if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
            if (ec) {  // out of descriptors or memory: try again shortly instead of spinning
                retry_timer.expires_after(std::chrono::milliseconds(100));
                retry_timer.async_wait([this](error_code e) {
                    if (!e) accept();
                });
                return;
            }
            admit(std::move(socket));
            accept();
        });
    }

    void admit(tcp::socket socket) {
        error_code ec;
        const tcp::endpoint peer = socket.remote_endpoint(ec);
        if (ec) return;
        socket.set_option(tcp::no_delay(true), ec);  // SSE chunks go out as they are written
        std::string client = peer.address().to_string();
        const auto per = per_client.find(client);
        const int64_t from_client = per == per_client.end() ? 0 : per->second;
        if (static_cast<int64_t>(open.size()) >= max_connections ||
            (opts.max_client_connections > 0 && from_client >= opts.max_client_connections)) {
            return refuse(socket);
        }
        auto conn = std::make_shared<HttpConnection>(std::move(socket), *this, client);
        open.emplace(conn.get(), conn);
        ++per_client[client];
        conn->start();
    }

    // Over a connection cap: one 503 written without waiting (a fresh socket's
    // buffer takes it), then closed.
    static void refuse(tcp::socket& socket) {
        const std::string body = unavailable("Too many connections; try again later").body();
        const std::string reply = "HTTP/1.1 503 Service Unavailable\r\nServer: tessera\r\nRetry-After: 1\r\n"
                                  "Content-Type: application/json\r\nConnection: close\r\nContent-Length: " +
                                  std::to_string(body.size()) + "\r\n\r\n" + body;
        [[maybe_unused]] const ssize_t sent =
            ::send(socket.native_handle(), reply.data(), reply.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        error_code ignored;
        socket.shutdown(tcp::socket::shutdown_both, ignored);
        socket.close(ignored);
    }

    template <class Fn>
    void for_each_connection(Fn fn) {
        std::vector<std::shared_ptr<HttpConnection>> live;
        for (auto& [ptr, weak] : open) {
            if (auto c = weak.lock()) live.push_back(std::move(c));
        }
        for (auto& c : live) fn(*c);
    }

    const ServerOptions& opts;
    const HttpRoutes handlers;
    asio::io_context io{1};
    tcp::acceptor acceptor;
    asio::steady_timer retry_timer;
    WorkQueue work;
    int64_t max_connections = 0;
    // Only the I/O thread touches these.
    std::unordered_map<const HttpConnection*, std::weak_ptr<HttpConnection>> open;
    std::unordered_map<std::string, int64_t> per_client;
};

HttpTransport::HttpTransport(const ServerOptions& options, HttpRoutes routes)
    : impl_(std::make_unique<Impl>(options, std::move(routes))) {}

HttpTransport::~HttpTransport() { stop(); }

Expected<int> HttpTransport::bind(const std::string& host, int port) {
    Impl& im = *impl_;
    const int64_t fd_limit = raise_fd_limit();
    im.max_connections = std::min<int64_t>(im.opts.max_connections, std::max<int64_t>(fd_limit - kReservedFds, 16));
    if (im.max_connections < im.opts.max_connections) {
        std::fprintf(stderr, "tessera serve: open-file limit %lld caps connections at %lld\n",
                     static_cast<long long>(fd_limit), static_cast<long long>(im.max_connections));
    }
    error_code ec;
    const auto address = asio::ip::make_address(host, ec);
    if (ec) return Status::error("cannot listen on " + host + ": not an IP address");
    const tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
    im.acceptor.open(endpoint.protocol(), ec);
    if (!ec) im.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) im.acceptor.bind(endpoint, ec);
    if (!ec) im.acceptor.listen(kListenBacklog, ec);
    if (ec) return Status::error("cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
    return static_cast<int>(im.acceptor.local_endpoint().port());
}

void HttpTransport::run() {
    Impl& im = *impl_;
    if (!im.acceptor.is_open()) return;
    im.accept();
    im.io.run();
    im.work.stop();
}

void HttpTransport::stop() {
    Impl& im = *impl_;
    asio::post(im.io, [&im] {
        error_code ignored;
        im.acceptor.close(ignored);
        im.retry_timer.cancel();
        im.for_each_connection([](HttpConnection& c) { c.close(); });
        im.io.stop();
    });
}

void HttpTransport::cancel_replies() {
    Impl& im = *impl_;
    asio::post(im.io, [&im] { im.for_each_connection([](HttpConnection& c) { c.cancel_reply(); }); });
}

}  // namespace tessera
