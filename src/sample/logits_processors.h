// The individual steps of the sampling chain (penalties, bias, truncations,
// temperature, the final pick), each a small function over a candidate list so
// it can be tested on hand-checkable logits.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <utility>
#include <vector>

namespace tessera {

struct TokenLogit {
    int32_t id;
    float logit;
    float p;  // probability, valid only right after softmax()
};

// A working set of candidate tokens. Starts as the whole vocabulary in id
// order; truncating steps sort it by (logit desc, id asc) and shrink it.
// Shrinking and refilling keep the capacity, so a warm list never allocates.
struct Candidates {
    std::vector<TokenLogit> items;
    bool sorted = false;  // by logit descending, ties by id ascending
    bool by_id = false;   // items[i].id == i for every i (full vocabulary)

    void reset_from(std::span<const float> logits);
    void sort();  // no-op when already sorted
    void truncate(size_t n);
};

// Repetition / frequency / presence penalties over the tokens in `window`
// (llama.cpp semantics: a token seen c > 0 times has its logit divided by
// `repeat` when positive or multiplied by it when negative, then reduced by
// c * frequency + presence). Requires the list in id order; `counts` is
// scratch of n_vocab zeros and is left all zero again.
void apply_penalties(Candidates& c, std::span<const int32_t> window, float repeat,
                     float frequency, float presence, std::span<int32_t> counts);

// Adds each bias to its token's logit (ids must be in range). Requires id order.
void apply_logit_bias(Candidates& c, std::span<const std::pair<int32_t, float>> bias);

// Keeps the k highest logits, sorted (k <= 0 or k >= size: a no-op).
void top_k(Candidates& c, int32_t k);

// Fills p with the softmax of the logits (max-subtracted, sum in double).
void softmax(Candidates& c);

// Locally typical sampling: keeps the tokens whose surprisal -log p is closest
// to the entropy H, in that order, until their mass exceeds p (at least one).
// p >= 1 keeps all. Leaves the list sorted by logit.
void typical(Candidates& c, float p);

// Nucleus: keeps the smallest prefix (by probability) whose mass reaches p,
// at least one token. p >= 1 keeps all.
void top_p(Candidates& c, float p);

// Keeps the tokens with p >= p_min * p_max (at least one). p_min <= 0 keeps all.
void min_p(Candidates& c, float p_min);

// Divides every logit by t (t > 0).
void apply_temperature(Candidates& c, float t);

// Highest logit, lowest id on ties. The list must be non-empty.
int32_t pick_greedy(const Candidates& c);

// Draws one token from softmax(logits) with `rng`. The uniform draw is built
// from the top 53 bits of one 64-bit output, so a seed gives the same tokens
// on every platform. At least one logit must be finite.
int32_t pick_random(Candidates& c, std::mt19937_64& rng);

// pick_random's draw alone: one token from the probabilities p already holds.
int32_t draw(const Candidates& c, std::mt19937_64& rng);

// A uniform double in [0, 1) from the top 53 bits of one 64-bit output.
double uniform01(std::mt19937_64& rng);

}  // namespace tessera
