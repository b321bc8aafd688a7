// One forward pass's input: a ragged batch of tokens from many sequences
// (prefill chunks and decode tokens together), each sequence with its own
// positions and KV block table. Weights are read once for the whole batch.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tessera {

struct BatchSequence {
    const int32_t* block_table = nullptr;  // slots of positions [0, pos0 + n_tokens) (model/kv_cache.h)
    int64_t pos0 = 0;                      // position of this sequence's first batch token
    int32_t first = 0;                     // index of that token in Batch::tokens
    int32_t n_tokens = 0;
    // The window pool's table (KvCache::windowed layers; entries of blocks
    // outside every window -1). Needed when the cache has a window pool.
    const int32_t* window_table = nullptr;
};

struct Batch {
    std::vector<int32_t> tokens;       // [n_tokens]
    std::vector<int32_t> seq_of;       // [n_tokens] index into seqs
    std::vector<uint8_t> want_logits;  // [n_tokens] 1 where a logits row is produced
    // [n_tokens] 1 where the final hidden state (after the output norm, before
    // the LM head) is produced: embeddings (model/pooling.h). add() leaves it 0.
    std::vector<uint8_t> want_hidden;
    std::vector<BatchSequence> seqs;

    void clear() {
        tokens.clear();
        seq_of.clear();
        want_logits.clear();
        want_hidden.clear();
        seqs.clear();
    }

    // Appends a run of one sequence. Logits rows come out in token order for
    // every token with want_logits set: the last one, or all when all_logits.
    void add(const int32_t* block_table, int64_t pos0, std::span<const int32_t> run, bool last_logits,
             bool all_logits = false) {
        const auto seq = static_cast<int32_t>(seqs.size());
        seqs.push_back(BatchSequence{block_table, pos0, static_cast<int32_t>(tokens.size()),
                                     static_cast<int32_t>(run.size())});
        for (size_t k = 0; k < run.size(); ++k) {
            tokens.push_back(run[k]);
            seq_of.push_back(seq);
            want_logits.push_back(all_logits || (last_logits && k + 1 == run.size()) ? 1 : 0);
            want_hidden.push_back(0);
        }
    }

    // Position of batch token t in its sequence.
    int64_t position(int64_t t) const {
        const BatchSequence& s = seqs[static_cast<size_t>(seq_of[static_cast<size_t>(t)])];
        return s.pos0 + (t - s.first);
    }

    int64_t n_outputs() const {
        int64_t n = 0;
        for (uint8_t w : want_logits) n += w;
        return n;
    }
};

}  // namespace tessera
