// Speculative decoding flags shared by run, chat and serve (llama.cpp's
// names where it has them): --spec ngram|draft, --draft-model FILE (implies
// draft), --draft-max N, --draft-min N, --spec-ngram-min/max N, --spec-max-batch N,
// and --jump-forward N (grammar-forced drafts, which need no drafter).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <thread>

#include "engine/engine.h"
#include "spec/draft_model_drafter.h"
#include "spec/ngram_drafter.h"

namespace tessera {

struct SpecFlags {
    std::string mode = "none";  // none | ngram | draft
    std::string draft_model;
    int32_t max_draft = 8;
    int32_t min_draft = 0;
    int32_t max_batch = 8;
    int32_t max_forced = SpecOptions{}.max_forced;
    NgramOptions ngram{};

    void add_to(CLI::App& app) {
        app.add_option("--spec", mode, "speculative decoding: none, ngram (prompt lookup) or draft (--draft-model)")
            ->check(CLI::IsMember({"none", "ngram", "draft"}));
        app.add_option("--draft-model,--model-draft", draft_model,
                       "draft model for speculative decoding (same vocabulary); implies --spec draft");
        app.add_option("--draft-max", max_draft, "most tokens drafted per step (default 8)")->check(CLI::Range(1, 64));
        app.add_option("--draft-min", min_draft,
                       "fewest tokens drafted per step (default 0: as many as the measured acceptance pays for)")
            ->check(CLI::Range(0, 64));
        app.add_option("--spec-ngram-min", ngram.min_n, "shortest n-gram matched (default 2)")->check(CLI::Range(1, 16));
        app.add_option("--spec-ngram-max", ngram.max_n, "longest n-gram matched (default 4)")->check(CLI::Range(1, 16));
        app.add_option("--spec-max-batch", max_batch,
                       "speculate only while at most this many sequences decode (default 8)")
            ->check(CLI::Range(0, 4096));
        app.add_option("--jump-forward", max_forced,
                       "most grammar-forced tokens a constrained request drafts per step (default 32; 0: off)")
            ->check(CLI::Range(0, 256));
    }
};

// The engine's speculation options for `f`; a draft model is loaded here,
// with its own KV for `kv_tokens` tokens and `threads` compute threads.
inline Expected<SpecOptions> spec_options(const SpecFlags& f, const Tokenizer& target, int threads, int64_t kv_tokens,
                                          KvTypes kv_types) {
    SpecOptions o;
    o.max_draft = f.max_draft;
    o.min_draft = std::min(f.min_draft, f.max_draft);
    o.max_batch = f.max_batch;
    o.max_forced = f.max_forced;
    const std::string mode = f.draft_model.empty() ? f.mode : "draft";
    if (mode == "ngram") {
        if (f.ngram.min_n > f.ngram.max_n) return Status::error("--spec-ngram-min is larger than --spec-ngram-max");
        o.drafter = std::make_shared<NgramDrafter>(f.ngram);
    } else if (mode == "draft") {
        if (f.draft_model.empty()) return Status::error("--spec draft needs --draft-model FILE");
        if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        auto d = DraftModelDrafter::load(f.draft_model, target, DraftModelOptions{threads, kv_tokens, kv_types});
        if (!d) return d.status();
        o.drafter = std::move(*d);
    }
    return o;
}

}  // namespace tessera
