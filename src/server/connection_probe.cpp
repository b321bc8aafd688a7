// Socket lookup via the process's descriptors plus getsockname/getpeername, and a
// non-blocking MSG_PEEK to see whether the peer has closed.
#include "server/connection_probe.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>

#include "server/process_sockets.h"

namespace tessera {
namespace {

// "addr" and port of a socket address, as httplib formats them.
bool address_matches(const sockaddr_storage& ss, const std::string& addr, int port) {
    char buf[INET6_ADDRSTRLEN] = {};
    int got_port = -1;
    if (ss.ss_family == AF_INET) {
        const auto* sin = reinterpret_cast<const sockaddr_in*>(&ss);
        inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf);
        got_port = ntohs(sin->sin_port);
    } else if (ss.ss_family == AF_INET6) {
        const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&ss);
        inet_ntop(AF_INET6, &sin6->sin6_addr, buf, sizeof buf);
        got_port = ntohs(sin6->sin6_port);
    } else {
        return false;
    }
    return got_port == port && addr == buf;
}

bool socket_matches(int fd, const std::string& local_addr, int local_port, const std::string& remote_addr,
                    int remote_port) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return false;
    if (!address_matches(ss, local_addr, local_port)) return false;
    len = sizeof ss;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return false;
    return address_matches(ss, remote_addr, remote_port);
}

}  // namespace

ConnectionProbe::ConnectionProbe(const std::string& local_addr, int local_port, const std::string& remote_addr,
                                 int remote_port) {
    for_each_open_fd([&](int fd) {
        if (!socket_matches(fd, local_addr, local_port, remote_addr, remote_port)) return true;
        fd_ = fd;
        return false;
    });
}

bool ConnectionProbe::peer_closed() const {
    if (fd_ < 0) return false;
    char byte = 0;
    const ssize_t n = recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0) return true;  // orderly shutdown by the peer
    if (n > 0) return false;
    return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

}  // namespace tessera
