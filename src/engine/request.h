// What a client asks the engine for, and the events the engine streams back.
// Plain data shared by the engine (producer) and the server (consumer).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "grammar/grammar.h"
#include "sample/sampling_params.h"

namespace tessera {

class TokenMaskTables;

struct GenerationRequest;

// Caps on what one request may ask for: the one source of truth for the
// engine (Engine::submit enforces them) and the server (which reads them from
// the engine to refuse a request naming the field, before any work).
struct RequestLimits {
    int32_t max_n = 16;              // choices per request
    int32_t max_top_logprobs = 20;
    size_t max_stop = 16;            // stop strings
    size_t max_stop_bytes = 256;     // per stop string
    size_t max_logit_bias = 1024;    // logit_bias entries
    // One embeddings call (server/embeddings_route): inputs, each an engine
    // request of its own, and their tokens together (OpenAI: 2048 inputs).
    size_t max_embedding_inputs = 2048;
    int64_t max_embedding_tokens = 262144;

    // LimitExceeded naming the first cap `r` is over; ok when within all.
    Status check(const GenerationRequest& r) const;
};

// A grammar every choice's output must match (structured output, forced tool
// calls). Compiled once per request by whoever builds it and shared, read
// only, by the request's choices; each choice keeps its own matcher.
struct GenerationConstraint {
    std::shared_ptr<const Grammar> grammar;  // null: unconstrained
    // The grammar's token tables over the engine's grammar vocabulary
    // (Engine::grammar_vocabulary), built before submission and shared by
    // requests with the same grammar (GrammarCache); null: the engine makes
    // them, building each table inside the first mask that needs it.
    std::shared_ptr<TokenMaskTables> tables;
    double compile_seconds = 0.0;            // for the metrics; 0 when unknown
    // Control tokens the grammar may emit where it admits their text (a
    // tool-call family's markers: sample/grammar_constraint.h); the output
    // then shows their text.
    std::vector<int32_t> marker_tokens;

    explicit operator bool() const { return grammar != nullptr; }
};

struct GenerationRequest {
    std::vector<int32_t> prompt;       // already tokenized (template applied)
    SamplingParams sampling;
    int32_t max_tokens = 256;          // per choice
    bool ignore_eos = false;
    std::vector<std::string> stop;     // stop strings (never appear in output)
    std::vector<int32_t> stop_token_ids;
    int32_t n = 1;                     // choices; they share the prompt's KV blocks
    int32_t top_logprobs = -1;         // -1: no logprobs; 0..max_top_logprobs: sampled token + k alternatives
    uint64_t cache_salt = 0;           // prefix-cache isolation domain (e.g. per API key)
    // Tokens the grammar forbids are never sampled; an end-of-generation
    // token only where the grammar accepts (and it then ends the choice, even
    // with ignore_eos); a choice whose grammar is complete, with nothing
    // allowed after it, ends with FinishReason::Stop.
    GenerationConstraint constraint;
    // An embedding: the prompt is prefilled and pooled (EngineOptions::pooling),
    // nothing is sampled; the one final event carries the vector. n must be 1;
    // sampling, max_tokens and stops are ignored.
    bool embed = false;
    // Speculative decoding: at most this many drafted tokens per step (0: none
    // for this request; -1: the engine's SpecOptions::max_draft).
    int32_t max_draft = -1;
    // Prompt caching with a time-to-live: once the prompt is computed, its
    // first `n_tokens` (whole blocks of them) stay in the prefix cache for
    // `ttl`, never evicted before (within EngineOptions::max_pinned_share).
    struct CachePin {
        int64_t n_tokens = 0;  // 0: no pin
        std::chrono::seconds ttl{0};
    } cache_pin;
};

enum class FinishReason { None, Stop, Length, Cancelled, Error };

const char* finish_reason_name(FinishReason r);  // "stop", "length", "cancelled", "error"

struct TokenLogprob {
    int32_t token = 0;
    float logprob = 0.0f;
    std::vector<std::pair<int32_t, float>> top;  // best first
};

// One event of one choice. A choice streams zero or more deltas, then exactly
// one event with finish != None (which may carry final text too).
struct StreamEvent {
    int32_t index = 0;                 // which of the n choices
    std::string text;                  // new text (complete UTF-8, stop strings removed)
    std::vector<int32_t> tokens;       // tokens whose text is in this event
    std::vector<TokenLogprob> logprobs;
    FinishReason finish = FinishReason::None;
    std::string error;                 // when finish == Error
    // Set on each choice's final event.
    int64_t prompt_tokens = 0;
    int64_t completion_tokens = 0;
    int64_t cached_tokens = 0;         // prompt tokens served from the prefix cache
    int64_t cache_write_tokens = 0;    // tokens of the request's cache pin that it computed and stored
    double seconds_to_first_token = 0.0;  // submit -> first sampled token (0 if none)
    double seconds_decoding = 0.0;        // first -> last sampled token
    std::vector<float> embedding;         // [n_embd], L2-normalised: an embedding request's final event
};

}  // namespace tessera
