// SlowClientGuard on real loopback sockets: a connection that sends no whole
// request within the limit is shut down; one marked as being handled is not,
// and its deadline restarts once its response is written.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "server/slow_client_guard.h"

namespace tessera {
namespace {

using namespace std::chrono_literals;

// A listening socket on 127.0.0.1 (any port) plus helpers to connect and accept.
class Loopback {
public:
    Loopback() {
        listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        EXPECT_EQ(listen(listen_fd_, 8), 0);
        socklen_t len = sizeof a;
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
    }
    ~Loopback() { close(listen_fd_); }
    int port() const { return port_; }

    // Connects a client; returns {client fd, accepted server-side fd, client's local port}.
    struct Pair {
        int client, server, client_port;
    };
    Pair connect_pair() const {
        const int c = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(static_cast<uint16_t>(port_));
        EXPECT_EQ(connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        const int s = accept(listen_fd_, nullptr, nullptr);
        socklen_t len = sizeof a;
        getsockname(c, reinterpret_cast<sockaddr*>(&a), &len);
        return {c, s, ntohs(a.sin_port)};
    }

private:
    int listen_fd_ = -1;
    int port_ = 0;
};

// True when the peer of `fd` has shut the connection down (EOF readable now).
bool closed_by_peer(int fd, std::chrono::milliseconds wait) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(wait.count())) <= 0) return false;
    char byte = 0;
    return recv(fd, &byte, 1, MSG_DONTWAIT) == 0;
}

TEST(SlowClientGuard, DropsAConnectionThatSendsNoRequestInTime) {
    Loopback lo;
    SlowClientGuard guard(300ms);
    guard.start(lo.port());
    const auto idle = lo.connect_pair();
    EXPECT_FALSE(closed_by_peer(idle.client, 100ms));  // not before the deadline
    EXPECT_TRUE(closed_by_peer(idle.client, 1500ms));
    EXPECT_EQ(guard.dropped(), 1);
    close(idle.client);
    close(idle.server);
}

TEST(SlowClientGuard, LeavesHandledRequestsAloneAndRestartsTheDeadlineAfterTheResponse) {
    Loopback lo;
    SlowClientGuard guard(300ms);
    guard.start(lo.port());
    const auto busy = lo.connect_pair();
    guard.request_started("127.0.0.1", busy.client_port);
    EXPECT_FALSE(closed_by_peer(busy.client, 1000ms));  // a long generation is not "slow"
    guard.response_written("127.0.0.1", busy.client_port);
    EXPECT_TRUE(closed_by_peer(busy.client, 1500ms));  // idle after its response: the deadline applies again
    EXPECT_EQ(guard.dropped(), 1);
    close(busy.client);
    close(busy.server);
}

TEST(SlowClientGuard, ZeroLimitDisablesIt) {
    Loopback lo;
    SlowClientGuard guard(0ms);
    guard.start(lo.port());
    const auto idle = lo.connect_pair();
    EXPECT_FALSE(closed_by_peer(idle.client, 700ms));
    EXPECT_EQ(guard.dropped(), 0);
    close(idle.client);
    close(idle.server);
}

}  // namespace
}  // namespace tessera
