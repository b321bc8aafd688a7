// The LRU of compiled grammars: compile and table builds run outside the
// lock, so a slow miss never holds up another request's hit.
#include "grammar/grammar_cache.h"

#include "core/check.h"

namespace tessera {

GrammarCache::GrammarCache(std::shared_ptr<const TokenVocabulary> vocab, size_t max_bytes)
    : vocab_(std::move(vocab)), max_bytes_(max_bytes) {
    TS_CHECK(vocab_ != nullptr);
}

size_t GrammarCache::entry_bytes(const Entry& e) {
    return e.key.size() + e.value.grammar->symbols().size() * sizeof(GrammarSymbol) + e.value.tables->memory_bytes();
}

void GrammarCache::evict() {
    while (bytes_ > max_bytes_ && !lru_.empty()) {
        bytes_ -= lru_.back().bytes;
        index_.erase(lru_.back().key);
        lru_.pop_back();
    }
}

Expected<CompiledGrammar> GrammarCache::make(const Compile& compile,
                                             std::chrono::duration<double> table_budget) const {
    Expected<Grammar> g = compile();
    if (!g.ok()) return g.status();
    CompiledGrammar made;
    made.grammar = std::make_shared<const Grammar>(std::move(*g));
    made.tables = std::make_shared<TokenMaskTables>(made.grammar, *vocab_);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(table_budget);
    made.tables->build_all(deadline);
    return made;
}

Expected<CompiledGrammar> GrammarCache::get(const std::string& key, const Compile& compile,
                                            std::chrono::duration<double> table_budget) {
    std::promise<Expected<CompiledGrammar>> promise;
    {
        std::unique_lock<std::mutex> lock(mu_);
        auto it = index_.find(key);
        if (it != index_.end()) {
            ++hits_;
            lru_.splice(lru_.begin(), lru_, it->second);
            Entry& e = *it->second;
            const CompiledGrammar found = e.value;
            // Masks may have built more tables since: count them now.
            bytes_ -= e.bytes;
            e.bytes = entry_bytes(e);
            bytes_ += e.bytes;
            evict();
            return found;
        }
        auto running = compiling_.find(key);
        if (running != compiling_.end()) {
            ++hits_;
            std::shared_future<Expected<CompiledGrammar>> first = running->second;
            lock.unlock();
            return first.get();
        }
        ++misses_;
        compiling_.emplace(key, promise.get_future().share());
    }
    Expected<CompiledGrammar> made = make(compile, table_budget);
    std::lock_guard<std::mutex> lock(mu_);
    compiling_.erase(key);
    promise.set_value(made);
    if (!made.ok()) return made;
    lru_.push_front(Entry{key, *made, 0});
    lru_.front().bytes = entry_bytes(lru_.front());
    bytes_ += lru_.front().bytes;
    index_.emplace(key, lru_.begin());
    evict();
    return made;
}

size_t GrammarCache::size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return lru_.size();
}

size_t GrammarCache::bytes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return bytes_;
}

size_t GrammarCache::hits() const {
    std::lock_guard<std::mutex> lock(mu_);
    return hits_;
}

size_t GrammarCache::misses() const {
    std::lock_guard<std::mutex> lock(mu_);
    return misses_;
}

}  // namespace tessera
