// Token buckets and the per-key limiter (rate_limiter.h).
#include "server/rate_limiter.h"

#include <algorithm>

#include "core/check.h"

namespace tessera {
namespace {

std::optional<TokenBucket> bucket_for(int64_t per_minute, LimiterClock::time_point now) {
    if (per_minute <= 0) return std::nullopt;
    return TokenBucket(per_minute, now);
}

// Keeps an existing bucket's level across a limit change.
void reshape(std::optional<TokenBucket>& bucket, int64_t per_minute, LimiterClock::time_point now) {
    if (per_minute <= 0) bucket.reset();
    else if (bucket) bucket->resize(per_minute, now);
    else bucket.emplace(per_minute, now);
}

}  // namespace

TokenBucket::TokenBucket(int64_t per_minute, LimiterClock::time_point now)
    : capacity_(per_minute), level_(per_minute * kMicrosPerMinute), last_(now) {
    TS_CHECK(per_minute > 0 && per_minute <= kMaxPerMinute);
}

void TokenBucket::refill(LimiterClock::time_point now) {
    if (now <= last_) return;  // a clock that does not move forward adds nothing
    const int64_t full = capacity_ * kMicrosPerMinute;
    const int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(now - last_).count();
    if (us >= kMicrosPerMinute) {  // a minute refills any level (and bounds the product below)
        level_ = full;
        last_ = now;
        return;
    }
    level_ = std::min(full, level_ + us * capacity_);
    last_ += std::chrono::microseconds(us);  // the sub-microsecond rest counts next time
}

int64_t TokenBucket::available(LimiterClock::time_point now) {
    refill(now);
    return level_ / kMicrosPerMinute;
}

int64_t TokenBucket::seconds_until(int64_t n, LimiterClock::time_point now) {
    TS_CHECK(n >= 0 && n <= capacity_);
    refill(now);
    const int64_t missing = n * kMicrosPerMinute - level_;
    if (missing <= 0) return 0;
    const int64_t us = (missing + capacity_ - 1) / capacity_;
    return (us + 999'999) / 1'000'000;
}

bool TokenBucket::try_take(int64_t n, LimiterClock::time_point now) {
    if (seconds_until(n, now) > 0) return false;
    level_ -= n * kMicrosPerMinute;
    return true;
}

void TokenBucket::give_back(int64_t n, LimiterClock::time_point now) {
    TS_CHECK(n >= 0);
    refill(now);
    level_ = std::min(capacity_ * kMicrosPerMinute, level_ + std::min(n, capacity_) * kMicrosPerMinute);
}

void TokenBucket::resize(int64_t per_minute, LimiterClock::time_point now) {
    TS_CHECK(per_minute > 0 && per_minute <= kMaxPerMinute);
    refill(now);
    capacity_ = per_minute;
    level_ = std::min(level_, capacity_ * kMicrosPerMinute);
}

KeyLimiter::KeyLimiter(const KeyLimits& limits, LimiterClock::time_point now)
    : limits_(limits), requests_(bucket_for(limits.rpm, now)), tokens_(bucket_for(limits.tpm, now)) {}

Admission KeyLimiter::admit(int64_t tokens, LimiterClock::time_point now) {
    std::lock_guard<std::mutex> lock(mu_);
    Admission a;
    const auto consider = [&a](LimitKind kind, int64_t wait) {
        if (wait > 0 && wait >= a.retry_after_s) a = Admission{kind, wait};
    };
    if (limits_.streams > 0 && streams_ >= limits_.streams) consider(LimitKind::Streams, 1);
    if (requests_) consider(LimitKind::Requests, requests_->seconds_until(1, now));
    if (tokens_) consider(LimitKind::Tokens, tokens_->seconds_until(std::min(tokens, tokens_->capacity()), now));
    if (a.refused != LimitKind::None) return a;
    if (requests_) requests_->try_take(1, now);
    if (tokens_) tokens_->try_take(std::min(tokens, tokens_->capacity()), now);
    ++streams_;
    return a;
}

void KeyLimiter::settle(int64_t reserved, int64_t used, bool refund_request, LimiterClock::time_point now) {
    std::lock_guard<std::mutex> lock(mu_);
    if (tokens_ && used < reserved) tokens_->give_back(reserved - used, now);
    if (requests_ && refund_request) requests_->give_back(1, now);
    --streams_;
    TS_CHECK(streams_ >= 0);
}

void KeyLimiter::set_limits(const KeyLimits& limits, LimiterClock::time_point now) {
    std::lock_guard<std::mutex> lock(mu_);
    limits_ = limits;
    reshape(requests_, limits.rpm, now);
    reshape(tokens_, limits.tpm, now);
}

KeyLimits KeyLimiter::limits() const {
    std::lock_guard<std::mutex> lock(mu_);
    return limits_;
}

int64_t KeyLimiter::streams() const {
    std::lock_guard<std::mutex> lock(mu_);
    return streams_;
}

}  // namespace tessera
