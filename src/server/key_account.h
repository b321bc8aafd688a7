// One API key's account: its limiter and usage counters, kept by name so a
// key file reload carries them over; and the lease a request holds on it from
// admission until its usage is known, when the reservation is settled.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "server/http_message.h"
#include "server/rate_limiter.h"

namespace tessera {

using NowFn = std::function<LimiterClock::time_point()>;

// Counted per key name once each request ends (requests, tokens), or when it
// is refused (rate_limited: the 429s).
struct KeyUsageCounts {
    int64_t requests = 0;
    int64_t prompt_tokens = 0;
    int64_t cached_tokens = 0;  // of prompt_tokens, read from the prefix cache
    int64_t completion_tokens = 0;
    int64_t rate_limited = 0;
};

// One key's usage and limits, for /metrics and /admin/usage.
struct KeyUsageRow {
    std::string name;
    std::string group;
    KeyLimits limits;
    int64_t active_requests = 0;
    KeyUsageCounts counts;
};

class KeyAccount {
public:
    KeyAccount(std::string name, const KeyLimits& limits, NowFn now)
        : name_(std::move(name)), now_(std::move(now)), limiter_(limits, now_()) {}

    const std::string& name() const { return name_; }
    LimiterClock::time_point now() const { return now_(); }
    KeyLimiter& limiter() { return limiter_; }
    const KeyLimiter& limiter() const { return limiter_; }

    KeyUsageCounts usage() const;
    void count_request(int64_t prompt, int64_t cached, int64_t completion);
    void count_rate_limited() { rate_limited_.fetch_add(1, std::memory_order_relaxed); }

private:
    const std::string name_;
    const NowFn now_;
    KeyLimiter limiter_;
    std::atomic<int64_t> requests_{0}, prompt_{0}, cached_{0}, completion_{0}, rate_limited_{0};
};

// An admitted request's hold on its key: one stream and `reserved` tokens.
// Settled exactly once: settle() with the request's usage (the unused part of
// the reservation goes back), cancel() when the server refused it after
// admission (all goes back, nothing is counted), or, when dropped unsettled
// (the client went away mid-request), the whole reservation stays charged.
class KeyLease {
public:
    KeyLease() = default;  // no key: holds nothing
    KeyLease(std::shared_ptr<KeyAccount> account, int64_t reserved)
        : account_(std::move(account)), reserved_(reserved) {}
    KeyLease(KeyLease&& other) noexcept = default;
    KeyLease& operator=(KeyLease&& other) noexcept;
    KeyLease(const KeyLease&) = delete;
    KeyLease& operator=(const KeyLease&) = delete;
    ~KeyLease() { abandon(); }

    void settle(int64_t prompt_tokens, int64_t cached_tokens, int64_t completion_tokens);
    void cancel();

private:
    void abandon();

    std::shared_ptr<KeyAccount> account_;  // null: no key, or already settled
    int64_t reserved_ = 0;
};

// Admits a request that may use `tokens` tokens (what it reserves; `what`
// says how they are counted, `param` the field that sets them) for the key of
// `account` (null: no key, always admitted). Refused: a 429 with Retry-After,
// or a 400 when the request could never fit the key's tokens per minute.
std::variant<KeyLease, HttpReply> admit_request(const std::shared_ptr<KeyAccount>& account, int64_t tokens,
                                                std::string_view what, const std::string& param);

}  // namespace tessera
