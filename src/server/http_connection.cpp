// A client connection: the read -> handle -> write cycle of one socket.
#include "server/http_connection.h"

#include <malloc.h>
#include <sys/socket.h>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <iterator>
#include <sstream>
#include <utility>

#include "server/api_error.h"
#include "server/http_server.h"
#include "server/http_transport.h"
#include "server/work_queue.h"

namespace tessera {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using boost::system::error_code;

void set_common_fields(http::fields& f, const HttpReply& r) {
    f.set(http::field::server, "tessera");
    f.set(http::field::content_type, r.content_type);
    if (r.status == 429 || r.status == 503) f.set(http::field::retry_after, "1");
    for (const auto& [name, value] : r.headers) f.set(name, value);
}

// A whole reply as bytes on the wire.
std::string serialize(HttpReply r, bool keep_alive) {
    http::response<http::string_body> res{static_cast<http::status>(r.status), 11};
    set_common_fields(res, r);
    res.keep_alive(keep_alive);
    res.body() = std::move(r.body);
    res.prepare_payload();
    std::ostringstream os;
    os << res;
    return std::move(os).str();
}

// The head of a streamed reply; its body follows in chunks.
std::string stream_head(const HttpReply& r, bool keep_alive) {
    http::response<http::empty_body> res{static_cast<http::status>(r.status), 11};
    set_common_fields(res, r);
    res.keep_alive(keep_alive);
    res.chunked(true);
    std::ostringstream os;
    os << res.base();
    return std::move(os).str();
}

void append_chunk(std::string& out, const std::string& data) {
    char size[24];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    out += size;
    out += data;
    out += "\r\n";
}

constexpr const char* kLastChunk = "0\r\n\r\n";

// After a request or reply this large, freed heap pages are handed back to
// the system (malloc_trim), so a burst of big requests does not leave the
// process gigabytes larger for good.
constexpr size_t kLargeBytes = size_t{1} << 20;

std::string target_path(beast::string_view target) {
    return std::string(target.substr(0, target.find('?')));
}

std::string target_query(beast::string_view target) {
    const size_t at = target.find('?');
    return at == beast::string_view::npos ? std::string() : std::string(target.substr(at + 1));
}

}  // namespace

HttpConnection::HttpConnection(asio::ip::tcp::socket socket, ConnectionOwner& owner, std::string client)
    : socket_(std::move(socket)),
      owner_(owner),
      client_(std::move(client)),
      buffer_(owner.options().max_header_bytes + 4096),
      read_timer_(socket_.get_executor()),
      write_timer_(socket_.get_executor()) {}

void HttpConnection::start() { read_next(); }

void HttpConnection::arm(asio::steady_timer& timer, uint64_t& generation, std::chrono::milliseconds limit) {
    const uint64_t armed = ++generation;
    if (limit.count() <= 0) {
        timer.cancel();
        return;
    }
    timer.expires_after(limit);
    timer.async_wait([self = shared_from_this(), &generation, armed](error_code ec) {
        if (!ec && generation == armed) self->close();
    });
}

// Each request, head and body, must arrive within request_timeout of the
// connection opening or of the previous reply: a client trickling bytes
// (slowloris) or idling is dropped then.
void HttpConnection::read_next() {
    if (closed_) return;
    const ServerOptions& o = owner_.options();
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(o.max_header_bytes));
    parser_->body_limit(static_cast<uint64_t>(o.max_body_bytes));
    if (buffer_.size() == 0) buffer_.shrink_to_fit();  // what a big head left behind goes back
    arm(read_timer_, read_generation_, o.request_timeout);
    http::async_read_header(socket_, buffer_, *parser_,
                            [self = shared_from_this()](error_code ec, size_t) { self->on_header(ec); });
}

void HttpConnection::refuse_read(error_code ec) {
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
        return reply(error_reply(headers_too_large("Request headers are too large (at most " +
                                                   std::to_string(owner_.options().max_header_bytes) + " bytes)")),
                     true);
    }
    if (ec == http::error::body_limit) return reply(error_reply(error_for_status(413, "", "")), true);
    const error_code end_of_stream = http::error::end_of_stream;
    if (ec.category() == end_of_stream.category() && ec != end_of_stream &&
        ec != http::error::partial_message) {
        return reply(error_reply(error_for_status(400, "", "")), true);  // malformed HTTP
    }
    close();  // the peer went away, or the request deadline passed
}

void HttpConnection::on_header(error_code ec) {
    if (closed_) return;
    if (ec) return refuse_read(ec);
    const auto& head = parser_->get();
    keep_alive_ = head.keep_alive();
    request_ = HttpRequest{};
    request_.method = std::string(head.method_string());
    request_.path = target_path(head.target());
    request_.query = target_query(head.target());
    request_.authorization = std::string(head[http::field::authorization]);
    request_.content_encoding = std::string(head[http::field::content_encoding]);
    request_.origin = std::string(head[http::field::origin]);
    request_.cors_request_headers = std::string(head[http::field::access_control_request_headers]);
    access_ = AccessRecord{client_, request_.method, request_.path, 0, true, {}, std::chrono::steady_clock::now(), {}};
    const size_t n_fields = static_cast<size_t>(std::distance(head.begin(), head.end()));
    if (n_fields > owner_.options().max_headers) {
        return reply(error_reply(headers_too_large("Too many request header fields (at most " +
                                                   std::to_string(owner_.options().max_headers) + ")")),
                     true);
    }
    // Refused before a byte of the body is read; the unread body makes the
    // connection unusable, so it closes after the reply.
    if (auto refusal = owner_.routes().screen(request_)) return reply(std::move(*refusal), !parser_->is_done());
    if (parser_->is_done()) return dispatch();
    if (beast::iequals(head[http::field::expect], "100-continue")) {
        return send("HTTP/1.1 100 Continue\r\n\r\n", Next::ReadBody);
    }
    read_body();
}

void HttpConnection::read_body() {
    http::async_read(socket_, buffer_, *parser_, [self = shared_from_this()](error_code ec, size_t) { self->on_body(ec); });
}

void HttpConnection::on_body(error_code ec) {
    if (closed_) return;
    if (ec) return refuse_read(ec);
    dispatch();
}

// The request is complete: no deadline while a worker handles it (generation
// may take long); the reply comes back to this thread.
void HttpConnection::dispatch() {
    arm(read_timer_, read_generation_, std::chrono::milliseconds(0));
    request_.body = std::move(parser_->get().body());
    parser_.reset();
    owner_.workers().post([self = shared_from_this(), request = std::move(request_)]() mutable {
        HttpReply r = self->owner_.routes().handle(request);
        const bool large = request.body.size() > kLargeBytes;
        request = HttpRequest{};  // a large body is freed on the worker, not later
        if (large) malloc_trim(0);
        asio::post(self->socket_.get_executor(),
                   [self, r = std::move(r)]() mutable { self->reply(std::move(r), false); });
    });
}

void HttpConnection::reply(HttpReply r, bool close_after) {
    if (closed_) return;
    if (close_after) keep_alive_ = false;
    if (!access_) access_ = AccessRecord{client_, "-", "", 0, true, {}, std::chrono::steady_clock::now(), {}};
    access_->status = r.status;
    if (!r.source) return send(serialize(std::move(r), keep_alive_), Next::ReadNext);
    source_ = std::move(r.source);
    streamed_ = r.streamed;
    source_headers_ = r.headers;
    collected_.clear();
    source_->set_waker([weak = weak_from_this()] {
        if (auto self = weak.lock()) self->wake();
    });
    watch_peer();
    if (streamed_) return send(stream_head(r, keep_alive_), Next::Pump);
    pump();
}

void HttpConnection::wake() {
    if (wake_pending_.exchange(true)) return;
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
        self->wake_pending_.store(false);
        self->pump();
    });
}

// Moves what the source has ready to the socket, one write at a time.
void HttpConnection::pump() {
    if (closed_ || !source_ || writing_) return;
    std::string bytes;
    const bool done = source_->poll(bytes);
    if (!streamed_) {
        collected_ += bytes;
        if (!done) return;
        HttpReply whole;
        whole.status = source_->final_status();
        whole.body = std::move(collected_);
        whole.headers = std::move(source_headers_);
        release_source();
        return send(serialize(std::move(whole), keep_alive_), Next::ReadNext);
    }
    std::string out;
    if (!bytes.empty()) append_chunk(out, bytes);
    if (done) {
        out += kLastChunk;
        release_source();
    }
    if (!out.empty()) send(std::move(out), done ? Next::ReadNext : Next::Pump);
}

// While a reply is produced, notices a client that has gone (its stream
// would be generated for nobody) without consuming a pipelined request.
void HttpConnection::watch_peer() {
    socket_.async_wait(asio::ip::tcp::socket::wait_read, [self = shared_from_this()](error_code ec) {
        if (ec || self->closed_ || !self->source_) return;
        char byte = 0;
        const ssize_t n = ::recv(self->socket_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return self->close();
        if (n < 0) self->watch_peer();  // spurious wake-up
        // n > 0: the next request is already here; it waits in the socket.
    });
}

// One write under --io-timeout: a client that stops reading is dropped and
// its generation cancelled.
void HttpConnection::send(std::string bytes, Next next) {
    writing_ = true;
    out_ = std::move(bytes);
    arm(write_timer_, write_generation_, owner_.options().io_timeout);
    asio::async_write(socket_, asio::buffer(out_),
                      [self = shared_from_this(), next](error_code ec, size_t) { self->on_sent(ec, next); });
}

void HttpConnection::on_sent(error_code ec, Next next) {
    writing_ = false;
    arm(write_timer_, write_generation_, std::chrono::milliseconds(0));
    if (closed_) return;
    if (ec) return close();
    if (out_.capacity() > kLargeBytes) {
        std::string().swap(out_);
        owner_.workers().post([] { malloc_trim(0); });
    }
    if (next == Next::ReadNext || next == Next::Close) log_access(true);
    switch (next) {
        case Next::Pump: return pump();
        case Next::ReadBody: return read_body();
        case Next::ReadNext:
            if (!keep_alive_) return linger_close();
            {
                error_code ignored;
                socket_.cancel(ignored);  // ends watch_peer's wait
            }
            return read_next();
        case Next::Close: return linger_close();
    }
}

// Closing a socket with unread bytes (a refused request's body) resets the
// connection, and the client may lose the reply it has not read yet. So the
// sending side closes first and what still arrives is read and dropped, for
// a second and a megabyte at most.
void HttpConnection::linger_close() {
    error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
    arm(read_timer_, read_generation_, std::chrono::milliseconds(1000));
    discard_input(size_t{1} << 20);
}

void HttpConnection::discard_input(size_t budget) {
    if (closed_) return;
    buffer_.clear();
    auto space = buffer_.prepare(std::min({budget, size_t{16384}, buffer_.max_size()}));
    socket_.async_read_some(space, [self = shared_from_this(), budget](error_code ec, size_t n) {
        if (ec || n >= budget) return self->close();
        self->discard_input(budget - n);
    });
}

// The source is done (or abandoned): its counts go to the access record first.
void HttpConnection::release_source() {
    if (access_) {
        access_->usage = source_->usage();
        if (!streamed_) access_->status = source_->final_status();
    }
    source_.reset();
}

void HttpConnection::log_access(bool completed) {
    if (!access_) return;
    access_->completed = completed;
    access_->finished = std::chrono::steady_clock::now();
    if (owner_.routes().log) owner_.routes().log(*access_);
    access_.reset();
}

void HttpConnection::cancel_reply() {
    if (source_) source_->cancel();
}

void HttpConnection::close() {
    if (closed_) return;
    closed_ = true;
    if (source_) {
        source_->cancel();
        release_source();
    }
    log_access(false);
    arm(read_timer_, read_generation_, std::chrono::milliseconds(0));
    arm(write_timer_, write_generation_, std::chrono::milliseconds(0));
    error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    owner_.forget(this);
}

}  // namespace tessera
