// SlowClientGuard's watchdog: every scan interval, list the process's sockets
// connected on the server's port, start a deadline for each new one, and shut
// down (SHUT_RDWR, so httplib's blocked read returns) the ones overdue.
#include "server/slow_client_guard.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <set>

#include "server/process_sockets.h"

namespace tessera {
namespace {

constexpr auto kScanInterval = std::chrono::milliseconds(200);

std::string peer_key(const std::string& addr, int port) { return addr + " " + std::to_string(port); }

// The peer of a socket connected on local_port, formatted as httplib does; empty otherwise.
std::string connection_peer(int fd, int local_port) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "";
    const auto port_of = [](const sockaddr_storage& s) {
        if (s.ss_family == AF_INET) return static_cast<int>(ntohs(reinterpret_cast<const sockaddr_in*>(&s)->sin_port));
        if (s.ss_family == AF_INET6) {
            return static_cast<int>(ntohs(reinterpret_cast<const sockaddr_in6*>(&s)->sin6_port));
        }
        return -1;
    };
    if (port_of(ss) != local_port) return "";
    len = sizeof ss;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "";  // listening socket
    char buf[INET6_ADDRSTRLEN] = {};
    const void* addr = ss.ss_family == AF_INET
                           ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr)
                           : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr);
    if (!inet_ntop(ss.ss_family, addr, buf, sizeof buf)) return "";
    return peer_key(buf, port_of(ss));
}

}  // namespace

void SlowClientGuard::start(int local_port) {
    if (limit_.count() <= 0 || thread_.joinable()) return;
    local_port_ = local_port;
    thread_ = std::thread([this] { run(); });
}

void SlowClientGuard::stop() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void SlowClientGuard::request_started(const std::string& peer_addr, int peer_port) {
    std::lock_guard<std::mutex> lock(mu_);
    conns_[peer_key(peer_addr, peer_port)].handling = true;
}

void SlowClientGuard::response_written(const std::string& peer_addr, int peer_port) {
    std::lock_guard<std::mutex> lock(mu_);
    Conn& c = conns_[peer_key(peer_addr, peer_port)];
    c.handling = false;
    c.deadline = Clock::now() + limit_;  // the next request on this keep-alive connection
}

void SlowClientGuard::run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
        lock.unlock();
        scan();
        lock.lock();
        wake_.wait_for(lock, kScanInterval, [this] { return stopping_; });
    }
}

void SlowClientGuard::scan() {
    std::set<std::string> seen;
    const auto now = Clock::now();
    for_each_open_fd([&](int fd) {
        const std::string key = connection_peer(fd, local_port_);
        if (key.empty()) return true;
        seen.insert(key);
        std::lock_guard<std::mutex> lock(mu_);
        auto [it, fresh] = conns_.try_emplace(key);
        Conn& c = it->second;
        c.missed = 0;
        if (fresh) c.deadline = now + limit_;
        if (c.handling || c.dropped || now < c.deadline) return true;
        // The fd was matched by its peer address a moment ago; if it has been
        // closed and reused since, shutdown() fails harmlessly or ends a
        // brand-new connection's first read (the client sees a reset).
        // Counted before the shutdown, so whoever sees the connection end
        // also sees it counted.
        c.dropped = true;
        dropped_.fetch_add(1);
        shutdown(fd, SHUT_RDWR);
        return true;
    });
    // Forget connections gone for two scans in a row (one may have opened
    // while the directory was being read; a closed one may still be marked
    // as handling when its response could not be written).
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = conns_.begin(); it != conns_.end();) {
        if (!seen.contains(it->first) && ++it->second.missed >= 2) {
            it = conns_.erase(it);
        } else {
            ++it;
        }
    }
}

}  // namespace tessera
