// Per-key rate limits: token buckets for requests and tokens per minute and a
// cap on requests in flight. Time is always passed in (the caller's clock), so
// tests drive it by hand; the arithmetic is integer, so refills are exact.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>

#include "server/key_file.h"

namespace tessera {

using LimiterClock = std::chrono::steady_clock;

// Holds up to `per_minute` tokens and refills continuously at per_minute / 60
// a second; starts full. Not thread-safe (KeyLimiter locks).
class TokenBucket {
public:
    TokenBucket(int64_t per_minute, LimiterClock::time_point now);

    int64_t capacity() const { return capacity_; }
    // Whole tokens held at `now`.
    int64_t available(LimiterClock::time_point now);
    // Seconds, rounded up, until `n` (<= capacity) tokens are held; 0: now.
    int64_t seconds_until(int64_t n, LimiterClock::time_point now);
    // Takes `n` (<= capacity) when held; else false and nothing changes.
    bool try_take(int64_t n, LimiterClock::time_point now);
    // Returns `n` unused tokens; the level never exceeds the capacity.
    void give_back(int64_t n, LimiterClock::time_point now);
    // A new capacity (and rate); the level is kept, capped at the new capacity.
    void resize(int64_t per_minute, LimiterClock::time_point now);

private:
    static constexpr int64_t kMicrosPerMinute = 60'000'000;
    void refill(LimiterClock::time_point now);

    int64_t capacity_;
    // Tokens x kMicrosPerMinute: one microsecond adds `capacity_` units, so a
    // refill is an exact product (both factors are capped: no overflow).
    int64_t level_;
    LimiterClock::time_point last_;
};

enum class LimitKind { None, Requests, Tokens, Streams };

// The answer to one admission: refused == None admits.
struct Admission {
    LimitKind refused = LimitKind::None;
    int64_t retry_after_s = 0;  // when the refusing limit lets the request in
};

// The three limits of one key, thread-safe. A request is admitted all or
// nothing: one request, its reserved tokens and one stream are taken together.
class KeyLimiter {
public:
    KeyLimiter(const KeyLimits& limits, LimiterClock::time_point now);

    // `tokens` must not exceed the tokens-per-minute limit (the caller refuses
    // such a request outright). Refused: the limit whose wait is longest.
    Admission admit(int64_t tokens, LimiterClock::time_point now);
    // An admitted request ended having used `used` of its `reserved` tokens;
    // frees its stream. `refund_request`: the request itself is given back too
    // (the server, not the key's traffic, refused it).
    void settle(int64_t reserved, int64_t used, bool refund_request, LimiterClock::time_point now);
    // New limits (a key file reload); bucket levels and streams carry over.
    void set_limits(const KeyLimits& limits, LimiterClock::time_point now);

    KeyLimits limits() const;
    int64_t streams() const;  // requests in flight

private:
    mutable std::mutex mu_;
    KeyLimits limits_;
    std::optional<TokenBucket> requests_;  // unset: no such limit
    std::optional<TokenBucket> tokens_;
    int64_t streams_ = 0;
};

}  // namespace tessera
