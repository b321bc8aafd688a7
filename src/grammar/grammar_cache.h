// Compiled grammars and their token tables, shared by every request whose
// constraint has the same canonical text: a client that sends one schema with
// every request compiles it and builds its tables once, on the first
// request's own thread, so the engine's decode steps do not pay for them.
// Least recently used first out, bounded in (approximate) bytes.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/status.h"
#include "grammar/grammar.h"
#include "grammar/token_mask_tables.h"

namespace tessera {

struct CompiledGrammar {
    std::shared_ptr<const Grammar> grammar;
    std::shared_ptr<TokenMaskTables> tables;  // over the cache's vocabulary
};

class GrammarCache {
public:
    using Compile = std::function<Expected<Grammar>()>;

    // max_bytes 0: nothing is kept (every get compiles and builds anew).
    GrammarCache(std::shared_ptr<const TokenVocabulary> vocab, size_t max_bytes);

    // The grammar of `key` (the constraint's kind and canonical text), made
    // by `compile` on a miss, its tables then built for at most
    // `table_budget` (the rest are built lazily, by the masks that need
    // them). A failed compile is returned and not kept. Thread-safe;
    // concurrent misses of one key wait for the first one's compile (a burst
    // of requests with a new schema builds its tables once).
    Expected<CompiledGrammar> get(const std::string& key, const Compile& compile,
                                  std::chrono::duration<double> table_budget);

    const std::shared_ptr<const TokenVocabulary>& vocab() const { return vocab_; }
    size_t size() const;
    size_t bytes() const;  // as of the last get: lazily built tables grow until the next
    size_t hits() const;
    size_t misses() const;

private:
    struct Entry {
        std::string key;
        CompiledGrammar value;
        size_t bytes = 0;
    };
    static size_t entry_bytes(const Entry& e);
    void evict();  // under mu_
    Expected<CompiledGrammar> make(const Compile& compile, std::chrono::duration<double> table_budget) const;

    std::shared_ptr<const TokenVocabulary> vocab_;
    size_t max_bytes_;
    mutable std::mutex mu_;
    std::list<Entry> lru_;  // most recently used first
    std::unordered_map<std::string, std::list<Entry>::iterator> index_;
    std::unordered_map<std::string, std::shared_future<Expected<CompiledGrammar>>> compiling_;
    size_t bytes_ = 0, hits_ = 0, misses_ = 0;
};

}  // namespace tessera
