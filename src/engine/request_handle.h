// The thread-safe link between one request's consumer (an HTTP thread) and
// the engine thread: an event queue plus a cancel flag. The queue has no cap,
// because the engine thread must never wait on a slow client; its length is
// bounded by the request itself (at most one event per generated token plus
// one final event per choice: n x (max_tokens + 1)).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "engine/request.h"

namespace tessera {

class RequestHandle {
public:
    RequestHandle(uint64_t id, int32_t n_choices) : id_(id), open_choices_(n_choices) {}

    uint64_t id() const { return id_; }

    // Consumer side. Waits up to `timeout` for the next event; nullopt on timeout.
    std::optional<StreamEvent> next(std::chrono::milliseconds timeout);
    // True once every choice's final event has been taken by next().
    bool finished() const;
    // Called (on the engine thread, without the handle's lock) after each
    // event is queued, so a consumer that does not block in next() -- the
    // event-driven HTTP server -- learns when to look again. Events queued
    // before it is set are not announced: call next() once after setting it.
    void set_listener(std::function<void()> listener);
    // Asks the engine to stop this request; it frees its blocks within one step
    // and sends each unfinished choice a final event with FinishReason::Cancelled.
    void cancel() { cancelled_.store(true, std::memory_order_relaxed); }

    // Engine side.
    bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }
    void push(StreamEvent event);

private:
    const uint64_t id_;
    std::atomic<bool> cancelled_{false};
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<StreamEvent> events_;
    std::shared_ptr<const std::function<void()>> listener_;  // shared: push() copies it without allocating
    int32_t open_choices_;  // choices whose final event has not been consumed
};

}  // namespace tessera
