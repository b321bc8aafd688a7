// Radix prefix cache (RadixAttention): a tree of block-aligned token runs, one
// KV block per node, shared by every sequence whose prompt starts the same way.
// Speaks token ids and block ids only; engine thread only, so no locks.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cache/block_pool.h"
#include "cache/prefix_key.h"

namespace tessera {

// Hash of one block's token run. It only narrows the child lookup: the cache
// always compares the full run, so a weak or colliding hash costs speed, never
// correctness (tests inject a constant hash to prove it).
using BlockHashFn = uint64_t (*)(std::span<const int32_t> run);
uint64_t default_block_hash(std::span<const int32_t> run);

// The KV window pool of sliding-window layers (model/kv_cache.h): blocks of
// its own, and the positions a windowed layer's query sees (itself
// included). No pool: every layer's K/V lives in the main pool's blocks.
struct WindowPool {
    BlockPool* pool = nullptr;
    int64_t window = 0;
};

class PrefixCache {
public:
    struct Match {
        std::vector<int32_t> blocks;  // one reference each, owned by the caller
        int64_t n_tokens = 0;         // blocks.size() * block_size
        // With a window pool, per block its window-pool block, or -1 for the
        // blocks a query at n_tokens no longer sees (not needed, not held);
        // one reference on each, owned by the caller.
        std::vector<int32_t> window_blocks;
    };

    // `pool` (and the window pool) must outlive the cache: the destructor
    // returns the cache's refs. The cache is the pool's share observer while
    // it lives. With a window pool, each node may also hold its run's block
    // there, and a prefix matches only as far as the window before its end
    // is all held (the windowed layers' K/V of the runs before it may be gone).
    PrefixCache(BlockPool& pool, int32_t block_size, BlockHashFn hash = default_block_hash, WindowPool window = {});
    ~PrefixCache();
    PrefixCache(const PrefixCache&) = delete;
    PrefixCache& operator=(const PrefixCache&) = delete;

    // Longest cached prefix of `tokens` made of whole blocks within the
    // isolation domain `salt`. Takes a reference on every returned block for
    // the caller, who later drops it with pool.unref(). Touches LRU times.
    Match match(std::span<const int32_t> tokens, uint64_t salt);

    // Drops the references a match handed over.
    void release(const Match& m);

    // How many leading tokens of `tokens` match() would return, without taking
    // references or touching LRU times (the scheduler asks before admitting).
    int64_t cached_tokens(std::span<const int32_t> tokens, uint64_t salt) const;

    // Stores full blocks: tokens.size() == blocks.size() * block_size, blocks[i]
    // holding the KV of tokens[i*bs, (i+1)*bs) after tokens[0, i*bs). Runs
    // already cached keep their existing block (no ref on the duplicate); each
    // newly stored block gets one reference owned by the cache.
    // window_blocks: empty, or per block its window-pool block (-1: freed),
    // kept the same way by a node that has none yet.
    void insert(std::span<const int32_t> tokens, std::span<const int32_t> blocks, uint64_t salt,
                std::span<const int32_t> window_blocks = {});

    // Frees up to `n_blocks` blocks only the cache references, least recently
    // used leaves first; a parent whose children all went becomes a leaf and
    // may follow. Returns the number of blocks freed.
    int32_t evict(int32_t n_blocks);

    // How many blocks evict() could free right now: nodes whose own block and
    // every descendant's block are referenced by the cache alone. O(1): kept
    // up to date as the pool reports blocks becoming shared or unshared.
    int32_t evictable_blocks() const { return n_evictable_; }

    // Frees up to `n_blocks` window-pool blocks only the cache references,
    // least recently used first; their nodes stay (a match then ends before
    // the runs whose window they were). O(nodes): it runs only when the
    // window pool is exhausted.
    int32_t evict_window(int32_t n_blocks);

    int64_t n_nodes() const { return n_nodes_; }  // cached blocks (roots excluded)
    int32_t block_size() const { return block_size_; }

    // Drops every entry and the cache's reference on each stored block.
    void clear();

    // Called by evict() for each block it frees, just before the cache drops
    // its reference (the block's K/V is still intact): the block's prefix key
    // (prefix_key.h), its token run and its id. The disk tier spills through
    // it. One observer; an empty function removes it.
    using EvictObserver = std::function<void(const PrefixKey& key, std::span<const int32_t> run, int32_t block)>;
    void set_evict_observer(EvictObserver observer) { evict_observer_ = std::move(observer); }

private:
    struct Node {
        int32_t parent = -1;       // -1 for a root
        int32_t block = -1;        // -1 for a root (one root per salt)
        int32_t window_block = -1; // the run's window-pool block, -1 for none
        int32_t n_children = 0;
        uint64_t key = 0;          // edges_ key; for a root, its salt
        uint64_t last_access = 0;  // tick_ of the latest match/insert through it
        int32_t n_blocked_children = 0;  // children that are blocked (below)
        bool held = false;               // its block has a holder besides the cache
        bool live = false;
        PrefixKey prefix;                // prefix_chain_key up to this node (a root: prefix_root_key)
    };
    using LeafKey = std::pair<uint64_t, int32_t>;  // (last_access, node id)

    std::span<const int32_t> run_of(int32_t node) const;
    uint64_t edge_key(int32_t parent, std::span<const int32_t> run) const;
    int32_t find_child(int32_t parent, std::span<const int32_t> run) const;
    int32_t find_root(uint64_t salt) const;
    int32_t get_or_create_root(uint64_t salt);
    int32_t add_child(int32_t parent, std::span<const int32_t> run, int32_t block);
    int32_t new_slot();
    void free_slot(int32_t node);
    void touch(int32_t node);
    void remove_leaf(int32_t node);
    bool is_leaf(int32_t node) const;
    // A node is blocked (not evictable) while it or a descendant is held.
    bool blocked(const Node& n) const { return n.held || n.n_blocked_children > 0; }
    void on_share_change(int32_t block, bool shared);
    void set_held(int32_t node, bool held);
    // The path of cached nodes matching `tokens`, root excluded.
    void walk(std::span<const int32_t> tokens, uint64_t salt, std::vector<int32_t>& path) const;
    // How many leading nodes of `path` a match may use: all, or with a window
    // pool the most whose window before the end is all held.
    size_t usable(std::span<const int32_t> path) const;
    void attach_window(int32_t node, int32_t window_block);

    BlockPool& pool_;
    int32_t block_size_;
    BlockHashFn hash_;
    WindowPool window_;
    uint64_t tick_ = 0;
    int64_t n_nodes_ = 0;
    int32_t n_evictable_ = 0;  // non-root nodes not blocked

    std::vector<Node> nodes_;          // arena; slots reused through free_slots_
    std::vector<int32_t> tokens_;      // [nodes_.size(), block_size] runs per slot
    std::vector<int32_t> free_slots_;
    std::unordered_multimap<uint64_t, int32_t> edges_;  // edge_key -> child node
    std::unordered_map<uint64_t, int32_t> roots_;       // salt -> root node
    std::set<LeafKey> leaves_;                          // non-root leaves, LRU first
    std::vector<int32_t> node_of_block_;                // [pool.n_blocks()], -1 if uncached
    EvictObserver evict_observer_;
};

}  // namespace tessera
