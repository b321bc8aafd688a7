// Per-key limits and usage: the key file parser (errors with line numbers and
// never a key), the token buckets against a hand-driven clock (refill, burst,
// Retry-After), the limiter's all-or-nothing admission and settling, leases,
// and a registry reload that keeps counters and bucket levels by name.
#include <gtest/gtest.h>

#include <chrono>
#include <atomic>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "server/key_account.h"
#include "server/key_file.h"
#include "server/key_registry.h"
#include "server/prometheus.h"

namespace tessera {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
const LimiterClock::time_point t0{};

TEST(KeyFile, BareKeysAndSettings) {
    auto specs = parse_key_file("# keys\nbare-key\n\n  sk-alice name=alice rpm=60 tpm=20000 streams=4 group=teamA \r\n"
                                "sk-bob\tname=bob\ttpm=5\n");
    ASSERT_TRUE(specs.ok()) << specs.error();
    ASSERT_EQ(specs->size(), 3u);
    const KeySpec& bare = (*specs)[0];
    EXPECT_EQ(bare.key, "bare-key");
    EXPECT_EQ(bare.name, default_key_name("bare-key"));
    EXPECT_EQ(bare.name.rfind("key-", 0), 0u);
    EXPECT_EQ(bare.name.find("bare"), std::string::npos);
    EXPECT_EQ(bare.limits, KeyLimits{});
    const KeySpec& alice = (*specs)[1];
    EXPECT_EQ(alice.key, "sk-alice");
    EXPECT_EQ(alice.name, "alice");
    EXPECT_EQ(alice.group, "teamA");
    EXPECT_EQ(alice.limits, (KeyLimits{60, 20000, 4}));
    EXPECT_EQ((*specs)[2].limits, (KeyLimits{0, 5, 0}));
}

TEST(KeyFile, ErrorsNameTheLineAndNeverTheKey) {
    const struct {
        const char* text;
        const char* expected;
    } cases[] = {
        {"k1\nsecret-one secret-two\n", "line 2: field 2 is not a setting"},
        {"secret-one colour=red\n", "line 1: field 2 is not a setting"},
        {"secret-one rpm=0\n", "line 1: field 2 rpm must be a whole number from 1 to"},
        {"secret-one tpm=-5\n", "tpm must be a whole number"},
        {"secret-one tpm=99999999999999999999\n", "tpm must be a whole number"},
        {"secret-one streams=2000000\n", "streams must be a whole number from 1 to 1000000"},
        {"secret-one name=\n", "name must be 1 to 64"},
        {"secret-one name=a\"b\n", "name must be 1 to 64"},
        {"secret-one group=a{b}\n", "group must be 1 to 64"},
        {"secret-one rpm=1 rpm=2\n", "field 3 sets rpm a second time"},
        {"secret-one\n# c\nsecret-one\n", "line 3: the same key as line 1"},
        {"secret-one name=x\nsecret-two name=x\n", "line 2: the name 'x' is already used on line 1"},
        {"# only comments\n\n", "no keys"},
        {"", "no keys"},
    };
    for (const auto& c : cases) {
        auto specs = parse_key_file(c.text);
        ASSERT_FALSE(specs.ok()) << c.text;
        EXPECT_NE(specs.error().find(c.expected), std::string::npos) << specs.error();
        EXPECT_EQ(specs.error().find("secret"), std::string::npos) << specs.error();
    }
}

TEST(KeyFile, DefaultNamesAreStableAndDistinct) {
    EXPECT_EQ(default_key_name("abc"), default_key_name("abc"));
    EXPECT_NE(default_key_name("abc"), default_key_name("abd"));
    EXPECT_EQ(default_key_name("abc").size(), 12u);  // "key-" + 8 hex
}

TEST(KeyFile, GroupsShareACacheDomain) {
    auto specs = parse_key_file("k1 group=g\nk2 group=g\nk3\nk4 group=other\n");
    ASSERT_TRUE(specs.ok());
    const auto& s = *specs;
    EXPECT_EQ(cache_salt_for(s[0]), cache_salt_for(s[1]));
    EXPECT_NE(cache_salt_for(s[0]), cache_salt_for(s[2]));
    EXPECT_NE(cache_salt_for(s[0]), cache_salt_for(s[3]));
    EXPECT_EQ(cache_salt_for(s[2]), cache_salt_for_key("k3"));  // no group: the key's own, as before
}

TEST(TokenBucketTest, StartsFullAndRefillsExactly) {
    TokenBucket b(60, t0);  // one token a second
    EXPECT_EQ(b.available(t0), 60);
    EXPECT_TRUE(b.try_take(60, t0));  // the whole burst at once
    EXPECT_FALSE(b.try_take(1, t0));
    EXPECT_EQ(b.available(t0 + milliseconds(999)), 0);
    EXPECT_EQ(b.available(t0 + seconds(1)), 1);
    EXPECT_EQ(b.available(t0 + seconds(10)), 10);
    EXPECT_EQ(b.available(t0 + seconds(600)), 60);  // never above the capacity
}

TEST(TokenBucketTest, SecondsUntilRoundsUp) {
    TokenBucket b(100, t0);  // 100 a minute: one token every 0.6 s
    ASSERT_TRUE(b.try_take(100, t0));
    EXPECT_EQ(b.seconds_until(0, t0), 0);
    EXPECT_EQ(b.seconds_until(1, t0), 1);    // 0.6 s
    EXPECT_EQ(b.seconds_until(10, t0), 6);   // 6.0 s exactly
    EXPECT_EQ(b.seconds_until(11, t0), 7);   // 6.6 s
    EXPECT_EQ(b.seconds_until(100, t0), 60);
    EXPECT_EQ(b.seconds_until(10, t0 + milliseconds(5999)), 1);
    EXPECT_EQ(b.seconds_until(10, t0 + seconds(6)), 0);
    EXPECT_TRUE(b.try_take(10, t0 + seconds(6)));
    EXPECT_EQ(b.available(t0 + seconds(6)), 0);
}

TEST(TokenBucketTest, ManySmallStepsLoseNothing) {
    TokenBucket b(7, t0);
    ASSERT_TRUE(b.try_take(7, t0));
    LimiterClock::time_point t = t0;
    for (int i = 0; i < 60000; ++i) {
        t += std::chrono::nanoseconds(1'000'300);  // steps with a sub-microsecond rest
        b.available(t);
    }
    // 60.018 s: full again; at 30 s exactly 3.5 tokens would be 3.
    EXPECT_EQ(b.available(t), 7);
    TokenBucket c(7, t0);
    ASSERT_TRUE(c.try_take(7, t0));
    for (int i = 1; i <= 30; ++i) c.available(t0 + seconds(i));
    EXPECT_EQ(c.available(t0 + seconds(30)), 3);
}

TEST(TokenBucketTest, GiveBackAndResizeCap) {
    TokenBucket b(10, t0);
    ASSERT_TRUE(b.try_take(8, t0));
    b.give_back(5, t0);
    EXPECT_EQ(b.available(t0), 7);
    b.give_back(100, t0);
    EXPECT_EQ(b.available(t0), 10);
    b.resize(4, t0);
    EXPECT_EQ(b.available(t0), 4);
    b.resize(40, t0);  // the level stays; the rate rises
    EXPECT_EQ(b.available(t0), 4);
    EXPECT_EQ(b.available(t0 + seconds(3)), 6);
    EXPECT_EQ(b.available(t0 - seconds(3)), 6);  // a clock going back adds (and takes) nothing
}

TEST(KeyLimiterTest, TokensReservedThenSettledToUsage) {
    KeyLimiter l(KeyLimits{0, 100, 0}, t0);
    EXPECT_EQ(l.admit(70, t0).refused, LimitKind::None);  // reserves 70: 30 left
    const Admission a = l.admit(40, t0);
    EXPECT_EQ(a.refused, LimitKind::Tokens);
    EXPECT_EQ(a.retry_after_s, 6);  // 10 missing at 100 a minute: 6.0 s
    l.settle(70, 25, false, t0);    // used 25 of 70: 45 go back, 75 held
    EXPECT_EQ(l.admit(75, t0).refused, LimitKind::None);
    EXPECT_EQ(l.admit(1, t0).refused, LimitKind::Tokens);
    EXPECT_EQ(l.streams(), 1);
}

TEST(KeyLimiterTest, RequestsPerMinuteAndItsRetryAfter) {
    KeyLimiter l(KeyLimits{2, 0, 0}, t0);  // one request every 30 s
    EXPECT_EQ(l.admit(5, t0).refused, LimitKind::None);
    EXPECT_EQ(l.admit(5, t0).refused, LimitKind::None);
    Admission a = l.admit(5, t0 + seconds(1));
    EXPECT_EQ(a.refused, LimitKind::Requests);
    EXPECT_EQ(a.retry_after_s, 29);
    l.settle(5, 5, false, t0 + seconds(1));  // ending a request frees no request slot
    EXPECT_EQ(l.admit(5, t0 + seconds(1)).refused, LimitKind::Requests);
    EXPECT_EQ(l.admit(5, t0 + seconds(30)).refused, LimitKind::None);
    l.settle(5, 0, true, t0 + seconds(30));  // refused by the server: the request goes back too
    EXPECT_EQ(l.admit(5, t0 + seconds(30)).refused, LimitKind::None);
}

TEST(KeyLimiterTest, StreamCapAndAllOrNothing) {
    KeyLimiter l(KeyLimits{10, 100, 2}, t0);
    EXPECT_EQ(l.admit(10, t0).refused, LimitKind::None);
    EXPECT_EQ(l.admit(10, t0).refused, LimitKind::None);
    const Admission a = l.admit(10, t0);
    EXPECT_EQ(a.refused, LimitKind::Streams);
    EXPECT_EQ(a.retry_after_s, 1);
    EXPECT_EQ(l.streams(), 2);
    l.settle(10, 10, false, t0);
    // A refusal took nothing: 8 requests and 80 tokens are left.
    EXPECT_EQ(l.admit(80, t0).refused, LimitKind::None);
    l.settle(80, 80, false, t0);
    const Admission b = l.admit(1, t0);
    EXPECT_EQ(b.refused, LimitKind::Tokens);
    EXPECT_EQ(b.retry_after_s, 1);  // 0.6 s
}

TEST(KeyLimiterTest, TheLongestWaitIsReported) {
    KeyLimiter l(KeyLimits{1, 60, 0}, t0);
    EXPECT_EQ(l.admit(60, t0).refused, LimitKind::None);
    l.settle(60, 50, false, t0);  // 10 tokens back; the request slot refills in 60 s
    const Admission a = l.admit(20, t0);
    EXPECT_EQ(a.refused, LimitKind::Requests);
    EXPECT_EQ(a.retry_after_s, 60);
    const Admission b = l.admit(20, t0 + seconds(59));  // tokens full again, one second to the request
    EXPECT_EQ(b.refused, LimitKind::Requests);
    EXPECT_EQ(b.retry_after_s, 1);
}

TEST(KeyLimiterTest, NewLimitsKeepLevels) {
    KeyLimiter l(KeyLimits{0, 100, 0}, t0);
    ASSERT_EQ(l.admit(90, t0).refused, LimitKind::None);
    l.set_limits(KeyLimits{0, 50, 1}, t0);  // 10 held, at most 50
    EXPECT_EQ(l.admit(10, t0).refused, LimitKind::Streams);  // the one in flight counts
    l.settle(90, 90, false, t0);
    EXPECT_EQ(l.admit(11, t0).refused, LimitKind::Tokens);
    EXPECT_EQ(l.admit(10, t0).refused, LimitKind::None);
    l.set_limits(KeyLimits{}, t0);  // no limits at all
    EXPECT_EQ(l.admit(1000000, t0).refused, LimitKind::None);
}

struct FakeClock {
    LimiterClock::time_point now = t0;
    NowFn fn() {
        return [this] { return now; };
    }
};

KeyUsageRow row_named(const KeyRegistry& r, const std::string& name) {
    for (const KeyUsageRow& row : r.usage()) {
        if (row.name == name) return row;
    }
    ADD_FAILURE() << "no key named " << name;
    return {};
}

TEST(KeyLeaseTest, SettleCancelAndAbandon) {
    FakeClock clock;
    auto account = std::make_shared<KeyAccount>("a", KeyLimits{0, 100, 0}, clock.fn());
    {
        auto admitted = admit_request(account, 60, "prompt + n x max_tokens", "max_tokens");
        ASSERT_TRUE(std::holds_alternative<KeyLease>(admitted));
        std::get<KeyLease>(admitted).settle(12, 4, 8);  // used 20: 80 held
        std::get<KeyLease>(admitted).settle(1, 1, 1);   // only the first settle counts
    }
    {
        auto admitted = admit_request(account, 50, "w", "max_tokens");
        std::get<KeyLease>(admitted).cancel();  // all back, nothing counted
    }
    { auto dropped = admit_request(account, 30, "w", "max_tokens"); }  // abandoned: 30 stay charged
    const KeyUsageCounts u = account->usage();
    EXPECT_EQ(u.requests, 2);
    EXPECT_EQ(u.prompt_tokens, 12);
    EXPECT_EQ(u.cached_tokens, 4);
    EXPECT_EQ(u.completion_tokens, 8);
    EXPECT_EQ(u.rate_limited, 0);
    EXPECT_EQ(account->limiter().streams(), 0);
    auto refused = admit_request(account, 51, "prompt + n x max_tokens", "max_tokens");  // 50 held
    ASSERT_TRUE(std::holds_alternative<HttpReply>(refused));
    const HttpReply& r = std::get<HttpReply>(refused);
    EXPECT_EQ(r.status, 429);
    ASSERT_EQ(r.headers.size(), 1u);
    EXPECT_EQ(r.headers[0].first, "Retry-After");
    EXPECT_EQ(r.headers[0].second, "1");  // 1 token at 100 a minute: 0.6 s
    EXPECT_NE(r.body.find("\"rate_limit_error\""), std::string::npos);
    EXPECT_NE(r.body.find("\"rate_limit_exceeded\""), std::string::npos);
    EXPECT_NE(r.body.find("100 tokens per minute"), std::string::npos) << r.body;
    EXPECT_EQ(account->usage().rate_limited, 1);
    clock.now += seconds(1);
    EXPECT_TRUE(std::holds_alternative<KeyLease>(admit_request(account, 51, "w", "max_tokens")));
}

TEST(KeyLeaseTest, TooLargeForTheKeyIsA400WithoutRetry) {
    FakeClock clock;
    auto account = std::make_shared<KeyAccount>("a", KeyLimits{0, 100, 0}, clock.fn());
    auto refused = admit_request(account, 101, "prompt + n x max_tokens", "max_tokens");
    ASSERT_TRUE(std::holds_alternative<HttpReply>(refused));
    const HttpReply& r = std::get<HttpReply>(refused);
    EXPECT_EQ(r.status, 400);
    EXPECT_TRUE(r.headers.empty());
    EXPECT_NE(r.body.find("request_too_large"), std::string::npos);
    EXPECT_EQ(account->usage().rate_limited, 0);
    EXPECT_TRUE(std::holds_alternative<KeyLease>(admit_request(nullptr, 1 << 30, "w", "max_tokens")));
}

TEST(KeyRegistryTest, ChecksKeysAndReloadKeepsAccountsByName) {
    FakeClock clock;
    auto first = parse_key_file("sk-a name=alice tpm=100\nsk-b name=bob streams=1\n");
    ASSERT_TRUE(first.ok());
    KeyRegistry reg(ApiKeys(std::move(*first)), clock.fn());
    EXPECT_FALSE(reg.check("Bearer nope"));
    auto alice = reg.check("Bearer sk-a");
    ASSERT_TRUE(alice && alice->account);
    EXPECT_EQ(alice->cache_salt, cache_salt_for_key("sk-a"));
    auto lease = admit_request(alice->account, 90, "w", "max_tokens");  // in flight across the reload
    ASSERT_TRUE(std::holds_alternative<KeyLease>(lease));
    std::get<KeyLease>(lease).settle(50, 0, 10);  // 60 used: 40 held

    // alice's key changes, bob goes, carol comes.
    auto second = parse_key_file("sk-a2 name=alice tpm=100 group=g\nsk-c name=carol\n");
    ASSERT_TRUE(second.ok());
    auto bob = reg.check("Bearer sk-b");
    ASSERT_TRUE(bob);
    auto bob_lease = admit_request(bob->account, 1, "w", "max_tokens");
    reg.set(ApiKeys(std::move(*second)));
    EXPECT_FALSE(reg.check("Bearer sk-a"));
    EXPECT_FALSE(reg.check("Bearer sk-b"));
    EXPECT_TRUE(reg.check("Bearer sk-c"));
    auto alice2 = reg.check("Bearer sk-a2");
    ASSERT_TRUE(alice2);
    EXPECT_EQ(alice2->account, alice->account);  // the same counters and buckets
    EXPECT_EQ(alice2->cache_salt, cache_salt_for_key("group g"));
    EXPECT_FALSE(std::holds_alternative<KeyLease>(admit_request(alice2->account, 41, "w", "max_tokens")));
    std::get<KeyLease>(bob_lease).settle(1, 0, 0);  // a removed key's request ends normally

    const KeyUsageRow a = row_named(reg, "alice");
    EXPECT_EQ(a.counts.requests, 1);
    EXPECT_EQ(a.counts.prompt_tokens, 50);
    EXPECT_EQ(a.counts.completion_tokens, 10);
    EXPECT_EQ(a.counts.rate_limited, 1);
    EXPECT_EQ(a.group, "g");
    EXPECT_EQ(reg.usage().size(), 2u);
    const std::string text = render_key_usage(reg.usage());
    EXPECT_NE(text.find("tessera_key_prompt_tokens_total{key=\"alice\"} 50\n"), std::string::npos) << text;
    EXPECT_NE(text.find("tessera_key_rate_limited_total{key=\"alice\"} 1\n"), std::string::npos);
    EXPECT_NE(text.find("tessera_key_requests_total{key=\"carol\"} 0\n"), std::string::npos);
    EXPECT_EQ(text.find("sk-"), std::string::npos);
    const Json j = key_usage_json(reg.usage());
    EXPECT_EQ(j["data"][0]["name"], "alice");
    EXPECT_EQ(j["data"][0]["limits"]["tpm"], 100);
    EXPECT_TRUE(j["data"][0]["limits"]["rpm"].is_null());
    EXPECT_EQ(j["data"][0]["completion_tokens"], 10);
}

// Admissions on several threads while the key file is reloaded: the stream
// cap holds at every moment, and every settled request is counted once.
TEST(KeyRegistryTest, ConcurrentAdmissionsAndReloads) {
    auto specs = parse_key_file("sk-a name=alice streams=2\n");
    ASSERT_TRUE(specs.ok());
    const ApiKeys keys(std::move(*specs));
    KeyRegistry reg(keys);
    std::atomic<int> inside{0}, most{0}, admitted{0};
    std::atomic<bool> stop{false};
    std::thread reloader([&] {
        while (!stop.load()) reg.set(keys);
    });
    std::vector<std::thread> workers;
    for (int t = 0; t < 4; ++t) {
        workers.emplace_back([&] {
            for (int i = 0; i < 2000; ++i) {
                auto caller = reg.check("Bearer sk-a");
                ASSERT_TRUE(caller);
                auto a = admit_request(caller->account, 1, "w", "max_tokens");
                if (!std::holds_alternative<KeyLease>(a)) continue;
                const int now = inside.fetch_add(1) + 1;
                int seen = most.load();
                while (now > seen && !most.compare_exchange_weak(seen, now)) {}
                inside.fetch_sub(1);
                std::get<KeyLease>(a).settle(1, 0, 1);
                admitted.fetch_add(1);
            }
        });
    }
    for (std::thread& w : workers) w.join();
    stop.store(true);
    reloader.join();
    EXPECT_LE(most.load(), 2);
    const KeyUsageRow row = row_named(reg, "alice");
    EXPECT_EQ(row.counts.requests, admitted.load());
    EXPECT_EQ(row.counts.requests + row.counts.rate_limited, 4 * 2000);
    EXPECT_EQ(row.active_requests, 0);
}

TEST(KeyRegistryTest, NoKeysLetsEveryoneIn) {
    KeyRegistry reg{ApiKeys()};
    auto caller = reg.check("");
    ASSERT_TRUE(caller);
    EXPECT_EQ(caller->cache_salt, 0u);
    EXPECT_EQ(caller->account, nullptr);
    EXPECT_EQ(render_key_usage(reg.usage()), "");
}

}  // namespace
}  // namespace tessera
