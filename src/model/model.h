// A loaded model: the GGUF mapping, its config and weight views, and the
// forward pass (per-architecture layer graphs in model/arch.h). Forward runs a run of tokens of one sequence, appends their
// K/V to the sequence's blocks and returns logits. One forward at a time: the
// activation workspace is shared (the engine thread owns the model).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/thread_pool.h"
#include "gguf/gguf_file.h"
#include "model/activation_stats.h"
#include "model/batch.h"
#include "model/kv_cache.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "model/moe_counters.h"

namespace tessera {

// A sequence with a run of the KV cache to itself, block after block, for
// driving forward passes directly (`tessera logits`, `tessera bench`, tests).
// It takes nothing from the cache's BlockPool: a cache it uses serves no
// scheduler. The engine's sequences get their block tables from sched/.
struct ForwardWorkspace;

struct SoloSequence {
    // Blocks [first_block, first_block + n_blocks) of `cache`; n_blocks < 0: to the end.
    explicit SoloSequence(const KvCache& cache, int first_block = 0, int n_blocks = -1);

    std::vector<int32_t> block_table;  // slot of each block's first position
    int64_t n_tokens = 0;              // positions computed; set it back to rewind
};

class Model {
public:
    static Expected<std::unique_ptr<Model>> load(const std::string& path);
    static Expected<std::unique_ptr<Model>> from_gguf(GgufFile file);
    ~Model();

    const ModelConfig& config() const { return config_; }
    const GgufFile& gguf() const { return file_; }
    const ModelWeights& weights() const { return weights_; }
    // Expert usage of a mixture-of-experts model since load (null for a dense
    // one): safe to read from any thread while forward passes run (/metrics).
    const MoeCounters* moe_counters() const { return moe_counters_.get(); }
    MoeCounters* moe_counters() { return moe_counters_.get(); }
    // While set (not null), forward passes add every layer matmul's input to
    // `stats` (`tessera imatrix`); it must outlive the passes.
    void set_activation_stats(ActivationStats* stats) { activation_stats_ = stats; }

    // An error once the model's file changed under its mapping: a read
    // faulted on a page the file lost (and got zeros, see core/sigbus_guard.h)
    // or the file is now shorter than the mapping. Every forward pass since
    // may have used zeros for weights, so its output must not be trusted; the
    // state is sticky until the file is loaded again. Thread-safe (one fstat).
    Status check_file() const;
    // The message check_file() fails with; "changed on disk" is its key phrase.
    std::string file_changed_message() const;

    // A KV cache sized for n_ctx tokens of this model, K/V stored as `types`
    // (which must pass check_kv_types for this model's head_dim).
    KvCache make_kv_cache(int64_t n_ctx, KvTypes types = {}, int block_size = 16) const;

    // Runs `tokens` at positions seq.n_tokens, seq.n_tokens+1, ... through
    // forward_batch, in chunks. Logits of the last token (or of every token
    // when all_logits) are written to `logits` as [n_out, n_vocab]. Errors:
    // token id out of range, the sequence's blocks are full.
    Status forward(KvCache& cache, SoloSequence& seq, std::span<const int32_t> tokens, bool all_logits,
                   std::vector<float>& logits, ThreadPool& pool);

    // One pass over a ragged multi-sequence batch; every sequence's block
    // table must already cover its positions. K/V of the batch tokens are
    // written to `cache`; logits rows ([n_outputs, n_vocab], token order)
    // for tokens with want_logits; when `hidden` is given, final hidden-state
    // rows ([n_hidden, n_embd], token order, after the output norm) for tokens
    // with want_hidden. Errors: token id out of range.
    Status forward_batch(const Batch& batch, KvCache& cache, std::vector<float>& logits, ThreadPool& pool,
                         std::vector<float>* hidden = nullptr);

private:
    Model(GgufFile file, ModelConfig config, ModelWeights weights);
    void final_hidden_rows(const Batch& batch, std::vector<float>& hidden) const;

    GgufFile file_;
    ModelConfig config_;
    ModelWeights weights_;
    std::unique_ptr<ForwardWorkspace> ws_;
    std::unique_ptr<MoeCounters> moe_counters_;
    ActivationStats* activation_stats_ = nullptr;
};

}  // namespace tessera
