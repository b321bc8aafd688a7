// PrefixCache: a node arena with one root per salt, children found through a
// hashed edge map and verified by full token comparison, and an ordered set of
// leaves keyed by last access so eviction pops the oldest leaf in O(log n).
#include "cache/prefix_cache.h"

#include <algorithm>

#include "core/check.h"

namespace tessera {
namespace {

// splitmix64 finalizer: a cheap, well-mixed 64-bit bijection.
uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

}  // namespace

uint64_t default_block_hash(std::span<const int32_t> run) {
    uint64_t h = 0x243F6A8885A308D3ull ^ run.size();
    for (int32_t t : run) h = mix64(h ^ static_cast<uint32_t>(t));
    return h;
}

PrefixCache::PrefixCache(BlockPool& pool, int32_t block_size, BlockHashFn hash, WindowPool window)
    : pool_(pool), block_size_(block_size), hash_(hash), window_(window) {
    TS_CHECK(block_size > 0);
    TS_CHECK(window.pool == nullptr || window.window > 0);
    TS_CHECK(hash != nullptr);
    node_of_block_.assign(static_cast<size_t>(pool.n_blocks()), -1);
    pool_.set_share_observer([this](int32_t block, bool shared) { on_share_change(block, shared); });
}

PrefixCache::~PrefixCache() {
    clear();
    pool_.set_share_observer(nullptr);
}

void PrefixCache::walk(std::span<const int32_t> tokens, uint64_t salt, std::vector<int32_t>& path) const {
    path.clear();
    int32_t node = find_root(salt);
    const size_t n_full = tokens.size() / static_cast<size_t>(block_size_);
    for (size_t i = 0; node >= 0 && i < n_full; ++i) {
        node = find_child(node, tokens.subspan(i * block_size_, block_size_));
        if (node >= 0) path.push_back(node);
    }
}

// A query at position m * bs sees the positions from m * bs - window + 1 on:
// the runs from there to m must have their window blocks.
size_t PrefixCache::usable(std::span<const int32_t> path) const {
    if (window_.pool == nullptr) return path.size();
    const int64_t bs = block_size_;
    size_t m = path.size();
    for (;;) {
        const auto lo = static_cast<size_t>(std::max<int64_t>(0, static_cast<int64_t>(m) * bs - window_.window + 1) / bs);
        size_t i = m;
        while (i > lo && nodes_[static_cast<size_t>(path[i - 1])].window_block >= 0) --i;
        if (i == lo) return m;
        m = i - 1;  // run i - 1 is missing: no match can end after it
    }
}

PrefixCache::Match PrefixCache::match(std::span<const int32_t> tokens, uint64_t salt) {
    Match result;
    std::vector<int32_t> path;
    walk(tokens, salt, path);
    const size_t m = usable(path);
    if (m == 0) return result;
    ++tick_;
    const auto lo = static_cast<size_t>(
        std::max<int64_t>(0, static_cast<int64_t>(m) * block_size_ - window_.window + 1) / block_size_);
    for (size_t i = 0; i < m; ++i) {
        touch(path[i]);
        const Node& n = nodes_[static_cast<size_t>(path[i])];
        pool_.ref(n.block);
        result.blocks.push_back(n.block);
        if (window_.pool == nullptr) continue;
        const int32_t w = i >= lo ? n.window_block : -1;
        if (w >= 0) window_.pool->ref(w);
        result.window_blocks.push_back(w);
    }
    result.n_tokens = static_cast<int64_t>(m) * block_size_;
    return result;
}

void PrefixCache::release(const Match& m) {
    for (int32_t b : m.blocks) pool_.unref(b);
    for (int32_t b : m.window_blocks) {
        if (b >= 0) window_.pool->unref(b);
    }
}

int64_t PrefixCache::cached_tokens(std::span<const int32_t> tokens, uint64_t salt) const {
    std::vector<int32_t> path;
    walk(tokens, salt, path);
    return static_cast<int64_t>(usable(path)) * block_size_;
}

void PrefixCache::insert(std::span<const int32_t> tokens, std::span<const int32_t> blocks, uint64_t salt,
                         std::span<const int32_t> window_blocks) {
    TS_CHECK(tokens.size() == blocks.size() * static_cast<size_t>(block_size_));
    TS_CHECK(window_blocks.empty() || (window_.pool != nullptr && window_blocks.size() == blocks.size()));
    if (blocks.empty()) return;
    int32_t node = get_or_create_root(salt);
    ++tick_;
    for (size_t i = 0; i < blocks.size(); ++i) {
        const std::span<const int32_t> run = tokens.subspan(i * block_size_, block_size_);
        int32_t child = find_child(node, run);
        if (child >= 0) {
            touch(child);  // already cached: keep its block, the duplicate stays the caller's
        } else {
            child = add_child(node, run, blocks[i]);
        }
        if (!window_blocks.empty()) attach_window(child, window_blocks[i]);
        node = child;
    }
}

void PrefixCache::attach_window(int32_t node, int32_t window_block) {
    Node& n = nodes_[static_cast<size_t>(node)];
    if (n.window_block >= 0 || window_block < 0) return;  // a duplicate stays the caller's
    TS_CHECK_MSG(window_.pool->ref_count(window_block) > 0, "inserted window block is not held by the caller");
    window_.pool->ref(window_block);
    n.window_block = window_block;
}

int32_t PrefixCache::evict_window(int32_t n_blocks) {
    if (window_.pool == nullptr) return 0;
    std::vector<LeafKey> only_cached;  // (last access, node)
    for (size_t i = 0; i < nodes_.size(); ++i) {
        const Node& n = nodes_[i];
        if (n.live && n.window_block >= 0 && window_.pool->ref_count(n.window_block) == 1) {
            only_cached.emplace_back(n.last_access, static_cast<int32_t>(i));
        }
    }
    const auto n = std::min(only_cached.size(), static_cast<size_t>(std::max(0, n_blocks)));
    std::partial_sort(only_cached.begin(), only_cached.begin() + static_cast<ptrdiff_t>(n), only_cached.end());
    for (size_t k = 0; k < n; ++k) {
        Node& node = nodes_[static_cast<size_t>(only_cached[k].second)];
        window_.pool->unref(node.window_block);
        node.window_block = -1;
    }
    return static_cast<int32_t>(n);
}

// Cost: O(log n) per freed block plus one step per held leaf older than the
// victims. Held leaves belong to running sequences, which touched them lately,
// so they sit at the young end of leaves_ and are rarely passed over.
int32_t PrefixCache::evict(int32_t n_blocks) {
    int32_t freed = 0;
    std::vector<LeafKey> in_use;  // leaves someone else still references
    while (freed < n_blocks && !leaves_.empty()) {
        const auto oldest = leaves_.begin();
        const int32_t node = oldest->second;
        if (pool_.ref_count(nodes_[static_cast<size_t>(node)].block) != 1) {
            in_use.push_back(*oldest);  // set aside so the loop moves on
            leaves_.erase(oldest);
            continue;
        }
        // remove_leaf may expose the parent as a new leaf; it joins leaves_ in
        // order and this loop reaches it when it is the oldest.
        remove_leaf(node);
        ++freed;
    }
    leaves_.insert(in_use.begin(), in_use.end());
    return freed;
}

void PrefixCache::on_share_change(int32_t block, bool shared) {
    const int32_t node = node_of_block_[static_cast<size_t>(block)];
    if (node >= 0) set_held(node, shared);
}

// Changes one node's own hold and carries the change of its blocked state up
// the tree, stopping at the first ancestor whose state does not change (so a
// match that takes a whole path costs O(1) per block).
void PrefixCache::set_held(int32_t node, bool held) {
    bool was = blocked(nodes_[static_cast<size_t>(node)]);
    nodes_[static_cast<size_t>(node)].held = held;
    for (int32_t n = node; n >= 0;) {
        Node& cur = nodes_[static_cast<size_t>(n)];
        const bool now = blocked(cur);
        if (now == was) return;
        if (cur.block >= 0) n_evictable_ += now ? -1 : 1;  // roots are not blocks
        if (cur.parent < 0) return;
        Node& parent = nodes_[static_cast<size_t>(cur.parent)];
        was = blocked(parent);
        parent.n_blocked_children += now ? 1 : -1;
        n = cur.parent;
    }
}

void PrefixCache::clear() {
    std::fill(node_of_block_.begin(), node_of_block_.end(), -1);  // the unrefs below are not news
    for (const Node& n : nodes_) {
        if (n.live && n.block >= 0) pool_.unref(n.block);
        if (n.live && n.window_block >= 0) window_.pool->unref(n.window_block);
    }
    nodes_.clear();
    tokens_.clear();
    free_slots_.clear();
    edges_.clear();
    roots_.clear();
    leaves_.clear();
    n_nodes_ = 0;
    n_evictable_ = 0;
}

std::span<const int32_t> PrefixCache::run_of(int32_t node) const {
    return std::span<const int32_t>(tokens_).subspan(
        static_cast<size_t>(node) * static_cast<size_t>(block_size_), block_size_);
}

uint64_t PrefixCache::edge_key(int32_t parent, std::span<const int32_t> run) const {
    return mix64(hash_(run) ^ mix64(static_cast<uint64_t>(parent) + 0x9E3779B97F4A7C15ull));
}

int32_t PrefixCache::find_child(int32_t parent, std::span<const int32_t> run) const {
    const auto [first, last] = edges_.equal_range(edge_key(parent, run));
    for (auto it = first; it != last; ++it) {
        const int32_t child = it->second;
        if (nodes_[static_cast<size_t>(child)].parent != parent) continue;
        if (std::ranges::equal(run_of(child), run)) return child;
    }
    return -1;
}

int32_t PrefixCache::find_root(uint64_t salt) const {
    const auto it = roots_.find(salt);
    return it == roots_.end() ? -1 : it->second;
}

int32_t PrefixCache::get_or_create_root(uint64_t salt) {
    const int32_t found = find_root(salt);
    if (found >= 0) return found;
    const int32_t root = new_slot();
    nodes_[static_cast<size_t>(root)].key = salt;
    nodes_[static_cast<size_t>(root)].prefix = prefix_root_key(salt);
    roots_.emplace(salt, root);
    return root;
}

int32_t PrefixCache::add_child(int32_t parent, std::span<const int32_t> run, int32_t block) {
    TS_CHECK_MSG(pool_.ref_count(block) > 0, "inserted block is not held by the caller");
    TS_CHECK_MSG(node_of_block_[static_cast<size_t>(block)] < 0,
                 "block already cached for another token run");
    pool_.ref(block);
    if (is_leaf(parent)) {
        leaves_.erase({nodes_[static_cast<size_t>(parent)].last_access, parent});
    }
    const int32_t child = new_slot();  // may grow nodes_: no Node& held across it
    std::ranges::copy(run, tokens_.begin() + static_cast<ptrdiff_t>(child) * block_size_);
    Node& n = nodes_[static_cast<size_t>(child)];
    n.parent = parent;
    n.block = block;
    n.key = edge_key(parent, run);
    n.prefix = prefix_chain_key(nodes_[static_cast<size_t>(parent)].prefix, run);
    n.last_access = tick_;
    edges_.emplace(n.key, child);
    leaves_.insert({n.last_access, child});
    ++nodes_[static_cast<size_t>(parent)].n_children;
    node_of_block_[static_cast<size_t>(block)] = child;
    ++n_nodes_;
    ++n_evictable_;  // a new leaf: evictable until someone else holds its block
    if (pool_.ref_count(block) > 1) set_held(child, true);
    return child;
}

int32_t PrefixCache::new_slot() {
    int32_t id;
    if (!free_slots_.empty()) {
        id = free_slots_.back();
        free_slots_.pop_back();
    } else {
        id = static_cast<int32_t>(nodes_.size());
        nodes_.emplace_back();
        tokens_.resize(tokens_.size() + static_cast<size_t>(block_size_));
    }
    nodes_[static_cast<size_t>(id)] = Node{};
    nodes_[static_cast<size_t>(id)].live = true;
    return id;
}

void PrefixCache::free_slot(int32_t node) {
    nodes_[static_cast<size_t>(node)].live = false;
    free_slots_.push_back(node);
}

void PrefixCache::touch(int32_t node) {
    Node& n = nodes_[static_cast<size_t>(node)];
    if (is_leaf(node)) {
        leaves_.erase({n.last_access, node});
        leaves_.insert({tick_, node});
    }
    n.last_access = tick_;
}

void PrefixCache::remove_leaf(int32_t node) {
    TS_CHECK(is_leaf(node));
    const Node n = nodes_[static_cast<size_t>(node)];
    TS_CHECK_MSG(!blocked(n), "evicting a block someone else holds");
    leaves_.erase({n.last_access, node});
    const auto [first, last] = edges_.equal_range(n.key);
    const auto edge = std::find_if(first, last, [&](const auto& e) { return e.second == node; });
    TS_CHECK(edge != last);
    edges_.erase(edge);
    node_of_block_[static_cast<size_t>(n.block)] = -1;
    if (evict_observer_) evict_observer_(n.prefix, run_of(node), n.block);
    pool_.unref(n.block);
    if (n.window_block >= 0) window_.pool->unref(n.window_block);
    free_slot(node);
    --n_nodes_;
    --n_evictable_;

    Node& parent = nodes_[static_cast<size_t>(n.parent)];
    --parent.n_children;
    if (parent.block < 0) {
        if (parent.n_children == 0) {  // an empty salt domain: drop its root
            roots_.erase(parent.key);
            free_slot(n.parent);
        }
    } else if (parent.n_children == 0) {
        leaves_.insert({parent.last_access, n.parent});
    }
}

bool PrefixCache::is_leaf(int32_t node) const {
    const Node& n = nodes_[static_cast<size_t>(node)];
    return n.block >= 0 && n.n_children == 0;
}

}  // namespace tessera
