// Drops connections too slow to send a request (slowloris): each request's
// headers and body must arrive within a deadline counted from when the
// connection opened or its previous response was written.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace tessera {

// cpp-httplib 0.11.4 only has per-read timeouts, which a client trickling one
// byte at a time never trips, and it exposes no socket. So a watchdog thread
// finds the server's connections in /proc/self/fd (as ConnectionProbe does)
// and shuts down those still reading a request past the deadline. Route
// handlers and the access logger tell it when a request is being handled
// (no deadline: generation may take long) and when its response is written.
class SlowClientGuard {
public:
    explicit SlowClientGuard(std::chrono::milliseconds limit) : limit_(limit) {}
    ~SlowClientGuard() { stop(); }
    SlowClientGuard(const SlowClientGuard&) = delete;
    SlowClientGuard& operator=(const SlowClientGuard&) = delete;

    // Starts watching connections accepted on `local_port`. A zero limit disables the guard.
    void start(int local_port);
    void stop();

    // Thread-safe; the peer as httplib reports it (req.remote_addr, req.remote_port).
    void request_started(const std::string& peer_addr, int peer_port);
    void response_written(const std::string& peer_addr, int peer_port);

    int64_t dropped() const { return dropped_.load(); }

private:
    using Clock = std::chrono::steady_clock;
    struct Conn {
        Clock::time_point deadline;
        bool handling = false;
        bool dropped = false;
        int missed = 0;  // consecutive scans that did not see the connection
    };

    void run();
    void scan();

    const std::chrono::milliseconds limit_;
    int local_port_ = 0;
    std::mutex mu_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::map<std::string, Conn> conns_;  // "addr port" of the peer -> state
    std::atomic<int64_t> dropped_{0};
    std::thread thread_;
};

}  // namespace tessera
