// GrammarCache: one compile and one set of tables per constraint text,
// shared by later requests; least recently used out past the byte bound;
// failed compiles not kept; the table budget leaves the rest lazy.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "grammar/gbnf.h"
#include "grammar/grammar_cache.h"
#include "grammar/token_mask.h"

namespace tessera {
namespace {

std::shared_ptr<const TokenVocabulary> vocabulary() {
    std::vector<std::string> tokens{""};  // 0: EOS
    for (const char* t : {"a", "b", "c", "ab", "abc", "\"", "{", "}", ":", ",", "x", "y", "xy"}) tokens.emplace_back(t);
    return std::make_shared<const TokenVocabulary>(std::move(tokens), std::vector<int32_t>{0});
}

// A compile function that counts its calls.
GrammarCache::Compile counting(const std::string& gbnf, int& calls) {
    return [gbnf, &calls]() {
        ++calls;
        return parse_gbnf(gbnf);
    };
}

constexpr std::chrono::seconds kBudget{10};

TEST(GrammarCache, SameKeySharesGrammarAndTables) {
    GrammarCache cache(vocabulary(), size_t{1} << 20);
    int calls = 0;
    auto first = cache.get("g1", counting("root ::= \"ab\" [xy]*", calls), kBudget);
    auto second = cache.get("g1", counting("root ::= \"ab\" [xy]*", calls), kBudget);
    ASSERT_TRUE(first.ok() && second.ok());
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(first->grammar, second->grammar);
    EXPECT_EQ(first->tables, second->tables);
    EXPECT_EQ(&first->tables->vocab(), cache.vocab().get());
    EXPECT_EQ(first->tables->grammar(), first->grammar);
    EXPECT_GT(first->tables->n_built(), 0u);  // prebuilt within the budget
    EXPECT_EQ(cache.hits(), 1u);
    EXPECT_EQ(cache.misses(), 1u);
    auto other = cache.get("g2", counting("root ::= \"c\"", calls), kBudget);
    ASSERT_TRUE(other.ok());
    EXPECT_EQ(calls, 2);
    EXPECT_NE(other->grammar, first->grammar);
    EXPECT_EQ(cache.size(), 2u);
}

TEST(GrammarCache, FailedCompileIsReturnedAndNotKept) {
    GrammarCache cache(vocabulary(), size_t{1} << 20);
    int calls = 0;
    for (int i = 0; i < 2; ++i) {
        auto bad = cache.get("bad", counting("root ::= undefined_rule", calls), kBudget);
        EXPECT_FALSE(bad.ok());
    }
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(cache.size(), 0u);
    EXPECT_EQ(cache.bytes(), 0u);
}

TEST(GrammarCache, EvictsLeastRecentlyUsedPastTheByteBound) {
    // Measure one entry, then allow room for two.
    size_t one = 0;
    {
        GrammarCache probe(vocabulary(), size_t{1} << 20);
        int calls = 0;
        ASSERT_TRUE(probe.get("k0", counting("root ::= \"a\" [xy]*", calls), kBudget).ok());
        one = probe.bytes();
    }
    ASSERT_GT(one, 0u);
    GrammarCache cache(vocabulary(), 2 * one + one / 2);
    int calls = 0;
    const auto get = [&](const std::string& key) {
        return cache.get(key, counting("root ::= \"a\" [xy]*", calls), kBudget).ok();
    };
    ASSERT_TRUE(get("k0"));
    ASSERT_TRUE(get("k1"));
    ASSERT_TRUE(get("k0"));  // k0 used last: k1 is the oldest
    EXPECT_EQ(calls, 2);
    ASSERT_TRUE(get("k2"));  // over the bound: k1 goes
    EXPECT_EQ(calls, 3);
    EXPECT_EQ(cache.size(), 2u);
    EXPECT_LE(cache.bytes(), 2 * one + one / 2);
    ASSERT_TRUE(get("k0"));
    EXPECT_EQ(calls, 3);  // still kept
    ASSERT_TRUE(get("k1"));
    EXPECT_EQ(calls, 4);  // compiled again
}

TEST(GrammarCache, ConcurrentMissesOfOneKeyCompileOnce) {
    GrammarCache cache(vocabulary(), size_t{1} << 20);
    std::atomic<int> calls{0};
    const GrammarCache::Compile slow = [&calls]() {
        ++calls;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the others arrive meanwhile
        return parse_gbnf("root ::= \"ab\" [xy]*");
    };
    std::vector<std::shared_ptr<const Grammar>> got(8);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < got.size(); ++i) {
        threads.emplace_back([&, i] {
            auto r = cache.get("k", slow, kBudget);
            if (r.ok()) got[i] = r->grammar;
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(calls.load(), 1);
    for (const auto& g : got) EXPECT_EQ(g, got[0]);
    EXPECT_NE(got[0], nullptr);
    EXPECT_EQ(cache.misses(), 1u);
    EXPECT_EQ(cache.hits(), 7u);
}

TEST(GrammarCache, ZeroBytesKeepsNothing) {
    GrammarCache cache(vocabulary(), 0);
    int calls = 0;
    auto a = cache.get("k", counting("root ::= \"a\"", calls), kBudget);
    auto b = cache.get("k", counting("root ::= \"a\"", calls), kBudget);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(cache.size(), 0u);
}

TEST(GrammarCache, ZeroTableBudgetLeavesTablesLazy) {
    GrammarCache cache(vocabulary(), size_t{1} << 20);
    int calls = 0;
    auto lazy = cache.get("k", counting("root ::= \"ab\" [xy]*", calls), std::chrono::seconds(0));
    ASSERT_TRUE(lazy.ok());
    EXPECT_EQ(lazy->tables->n_built(), 0u);
    // Still correct: the first mask builds what it needs.
    GrammarMatcher m(lazy->grammar);
    TokenMask mask;
    lazy->tables->compute(m, mask);
    EXPECT_TRUE(mask_has(mask, 4));   // "ab"
    EXPECT_FALSE(mask_has(mask, 2));  // "b"
    EXPECT_GT(lazy->tables->n_built(), 0u);
}

}  // namespace
}  // namespace tessera
