// Drafts from a smaller model with the target's vocabulary (a draft model):
// greedy continuations for greedy sequences (point masses), and for sampled
// ones tokens drawn through the sequence's own chain (without penalties),
// with their distributions q for the engine's rejection rule (spec/drafter.h).
// The draft model keeps its own paged KV cache: each sequence's draft-side
// tokens are compared with the target's accepted tokens on every call, the
// K/V past the common prefix is recomputed, and all sequences draft
// together, one batched forward pass per drafted position.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "core/thread_pool.h"
#include "model/batch.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "sample/sampler.h"
#include "spec/drafter.h"
#include "tokenizer/tokenizer.h"

namespace tessera {

struct DraftModelOptions {
    int threads = 1;
    int64_t kv_tokens = 8192;  // draft-side KV for all sequences together; a sequence that finds none drafts nothing
    KvTypes kv_types{};
    int block_size = 16;
    int32_t prefill_chunk = 256;  // catch-up tokens per sequence per forward pass
};

class DraftModelDrafter final : public Drafter {
public:
    // Loads the draft model and refuses one whose vocabulary differs from the
    // target's (every token's text must be the same, id for id).
    static Expected<std::unique_ptr<DraftModelDrafter>> load(const std::string& path, const Tokenizer& target,
                                                             DraftModelOptions options);
    ~DraftModelDrafter() override;

    const char* name() const override { return "draft_model"; }
    void propose(std::span<DraftRequest> requests) override;
    void forget(uint64_t seq_id) override;
    uint64_t weight_bytes() const override { return model_->gguf().tensor_bytes(); }

private:
    struct DraftSeq {
        std::vector<int32_t> tokens;       // tokens whose K/V the draft cache holds, in order
        std::vector<int32_t> block_table;  // slots of whole blocks
        std::optional<Sampler> sampler;    // a sampled sequence's draft chain, its own random stream
    };
    struct Active {
        DraftRequest* request;
        DraftSeq* seq;
        std::span<const int32_t> pending;  // tokens still to run before the next draft token
    };

    DraftModelDrafter(std::unique_ptr<Model> model, DraftModelOptions options);
    bool reserve(DraftSeq& seq, int64_t positions);  // blocks for positions [0, positions)
    void release(DraftSeq& seq);
    // Runs every active sequence's pending tokens, in chunks; afterwards
    // logits_ holds one row per active sequence (its last token's).
    Status run(std::vector<Active>& active);
    // The next draft token from one row of draft logits; -1 when the row
    // cannot be sampled (no finite logit: that sequence's draft ends there).
    int32_t next_token(Active& a, const float* row);

    std::unique_ptr<Model> model_;
    DraftModelOptions options_;
    KvCache cache_;
    ThreadPool pool_;
    std::unordered_map<uint64_t, DraftSeq> seqs_;
    Batch batch_;
    std::vector<float> logits_;
};

// Empty when the vocabularies agree; otherwise what differs.
std::string vocabulary_mismatch(const Tokenizer& draft, const Tokenizer& target);

}  // namespace tessera
