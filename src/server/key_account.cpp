// Key accounts, leases and the 429s of per-key limits (key_account.h).
#include "server/key_account.h"

#include <utility>

#include "server/api_error.h"

namespace tessera {
namespace {

HttpReply rate_limited_reply(const KeyAccount& account, const Admission& a, int64_t tokens, std::string_view what) {
    const KeyLimits limits = account.limiter().limits();
    std::string which;
    switch (a.refused) {
        case LimitKind::Requests: which = std::to_string(limits.rpm) + " requests per minute"; break;
        case LimitKind::Tokens:
            which = std::to_string(limits.tpm) + " tokens per minute; this request reserves " + std::to_string(tokens) +
                    " (" + std::string(what) + ")";
            break;
        case LimitKind::Streams: which = std::to_string(limits.streams) + " concurrent requests"; break;
        case LimitKind::None: break;
    }
    const ApiError error{429,
                         "Rate limit reached for key '" + account.name() + "' on " + which + ". Retry after " +
                             std::to_string(a.retry_after_s) + " s.",
                         "rate_limit_error", "", "rate_limit_exceeded"};
    HttpReply reply = error_reply(error);
    reply.headers.emplace_back("Retry-After", std::to_string(a.retry_after_s));
    return reply;
}

}  // namespace

KeyUsageCounts KeyAccount::usage() const {
    constexpr auto r = std::memory_order_relaxed;
    return {requests_.load(r), prompt_.load(r), cached_.load(r), completion_.load(r), rate_limited_.load(r)};
}

void KeyAccount::count_request(int64_t prompt, int64_t cached, int64_t completion) {
    constexpr auto r = std::memory_order_relaxed;
    requests_.fetch_add(1, r);
    prompt_.fetch_add(prompt, r);
    cached_.fetch_add(cached, r);
    completion_.fetch_add(completion, r);
}

KeyLease& KeyLease::operator=(KeyLease&& other) noexcept {
    if (this != &other) {
        abandon();
        account_ = std::move(other.account_);
        reserved_ = other.reserved_;
    }
    return *this;
}

void KeyLease::settle(int64_t prompt_tokens, int64_t cached_tokens, int64_t completion_tokens) {
    if (!account_) return;
    account_->limiter().settle(reserved_, prompt_tokens + completion_tokens, false, account_->now());
    account_->count_request(prompt_tokens, cached_tokens, completion_tokens);
    account_.reset();
}

void KeyLease::cancel() {
    if (!account_) return;
    account_->limiter().settle(reserved_, 0, true, account_->now());
    account_.reset();
}

void KeyLease::abandon() {
    if (!account_) return;
    account_->limiter().settle(reserved_, reserved_, false, account_->now());
    account_->count_request(0, 0, 0);
    account_.reset();
}

std::variant<KeyLease, HttpReply> admit_request(const std::shared_ptr<KeyAccount>& account, int64_t tokens,
                                                std::string_view what, const std::string& param) {
    if (!account) return KeyLease();
    const int64_t tpm = account->limiter().limits().tpm;
    if (tpm > 0 && tokens > tpm) {
        return error_reply(bad_request(param,
                                       "This request may use " + std::to_string(tokens) + " tokens (" +
                                           std::string(what) + "), more than key '" + account->name() +
                                           "' may use in a minute (" + std::to_string(tpm) + "); lower " + param,
                                       "request_too_large"));
    }
    const Admission a = account->limiter().admit(tokens, account->now());
    if (a.refused == LimitKind::None) return KeyLease(account, tokens);
    account->count_rate_limited();
    return rate_limited_reply(*account, a, tokens, what);
}

}  // namespace tessera
