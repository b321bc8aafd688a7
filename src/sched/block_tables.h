// The block tables of the scheduler's sequences against the KV cache's pool:
// whole blocks for full runs of block_size positions, and a half block for a
// sequence's last run while it is at most half a block long, so the empty
// tail slots a running sequence holds average a quarter block instead of
// half a block. A half run that must grow moves into a whole block (a copy of
// at most half a block of K/V per layer); a run shared by forked choices is
// copied before it is written (copy-on-write). Bookkeeping only: the copies
// are returned as SlotCopy entries for the engine to apply to the KV storage.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <vector>

#include "cache/block_pool.h"
#include "cache/prefix_cache.h"
#include "sched/sequence.h"

namespace tessera {

// Copy the K/V of slots [src, src + n) of every layer to [dst, dst + n)
// (KvCache::copy_slots). Copies are applied in the order they were made:
// a later one may write a block an earlier one read before it was freed.
struct SlotCopy {
    int32_t src;
    int32_t dst;
    int32_t n;
    bool window = false;  // slots of the window pool's layers (Sequence::window_table)
};

class BlockTables {
public:
    // Slots are pool ids times block_size (halves: half ids times
    // block_size / 2). evict: frees some unreferenced blocks (the prefix
    // cache's) of the main pool, or with `true` of the window pool; false
    // when there are none to free. With a window pool each sequence also
    // keeps a window_table of whole blocks there, the same length as its
    // block_table, whose runs behind the window are freed (slide).
    BlockTables(BlockPool& pool, int32_t block_size, std::function<bool(bool window)> evict, WindowPool window = {});

    // Makes slots exist for positions [0, upto) of seq and makes the run
    // receiving position n_computed its own, appending the K/V copies that
    // needs to `copies`; false when the pool ran out (the table stays valid,
    // possibly with some new entries, and the copies made so far stand).
    bool ensure(Sequence& seq, int64_t upto, std::vector<SlotCopy>& copies);
    // Adds a holder to every run of seq's table (a copy made for a fork).
    void share(const Sequence& seq);
    // Drops the runs of seq's table that hold no position below `upto`
    // (rejected speculative positions).
    void truncate(Sequence& seq, int64_t upto);
    // Drops seq's holds and empties its table.
    void release(Sequence& seq);
    // Frees the window-pool runs no query from position n_computed on sees.
    void slide(Sequence& seq);
    // Slots seq's table reaches.
    int64_t capacity(const Sequence& seq) const;
    // Allocated but empty slots: the tails of the running sequences' last
    // runs (a tail shared by forks counted once) plus the free halves of
    // split blocks, which only another short run can use.
    int64_t unfilled(const std::list<Sequence*>& running) const;

private:
    int32_t take(bool half);  // the first slot of a new whole or half block, or -1
    int32_t take_window();    // the first slot of a new window-pool block, or -1
    void drop(int32_t slot, bool half);
    bool ensure_window(Sequence& seq, std::vector<SlotCopy>& copies);
    bool shared(int32_t slot, bool half) const;
    int32_t half_block() const { return block_size_ % 2 == 0 ? block_size_ / 2 : 0; }  // 0: no halves

    BlockPool& pool_;
    int32_t block_size_;
    std::function<bool(bool window)> evict_;
    WindowPool window_;
};

}  // namespace tessera
