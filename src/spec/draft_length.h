// Per-sequence draft length chosen by expected speed. With a per-token
// acceptance rate a (measured on this sequence's recent drafts), a draft of
// k tokens yields E(k) = 1 + a + ... + a^k tokens per step and costs
// 1 + k * w plain decode steps, where w is one drafted token's cost relative
// to a decode step: drafting it (0 for a lookup; a draft model's weight bytes
// over the target's) plus verifying one more position. The k in 1..max with
// the best E(k) / (1 + k * w) is drafted; when none beats plain decoding,
// drafting pauses (2, 4, ... up to 64 steps as pauses repeat) and then probes
// with one token, so a sequence whose drafts stop paying costs next to nothing
// and one that copies its prompt drafts the maximum. A minimum length (the
// user's --draft-min) overrides the estimate: never fewer, never a pause.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tessera {

// One more verified position's cost relative to a one-token decode step:
// on the 135M Q4_1 model (2 threads, AMD Zen 4) an 8-token step cost 3.3x a
// one-token step, 0.33 per extra position; larger, more memory-bound models
// pay less. A conservative constant, not a measurement of the running machine.
inline constexpr double kVerifyPositionCost = 0.3;

class DraftLength {
public:
    // `token_cost`: w above, verification included; `min` <= `max`.
    DraftLength(int32_t max, int32_t min, double token_cost)
        : max_(std::max(max, 0)), min_(std::clamp(min, 0, max_)), cost_(token_cost) {}

    // This step's draft length (0: none); counts a pause down.
    int32_t next() {
        if (max_ == 0) return 0;
        if (min_ > 0) return std::max(best(), min_);
        if (pause_ > 0) {
            --pause_;
            return 0;
        }
        const int32_t k = best();
        if (k > 0 || probing_) {
            probing_ = false;
            return std::max(k, 1);
        }
        pause_ = backoff_ - 1;  // this step is the pause's first
        backoff_ = std::min(2 * backoff_, kMaxPause);
        probing_ = true;
        return 0;
    }

    // A verified draft of `drafted` tokens of which the first `accepted` held.
    void update(int32_t drafted, int32_t accepted) {
        if (drafted <= 0) return;  // nothing was proposed: nothing measured
        held_ = kDecay * held_ + accepted;
        failed_ = kDecay * failed_ + (accepted < drafted ? 1.0 : 0.0);
        if (best() > 0) backoff_ = kMinPause;
    }

    double acceptance() const { return held_ / (held_ + failed_); }

private:
    static constexpr double kDecay = 0.7;  // a draft's weight after each later one: about the last three count
    static constexpr int32_t kMinPause = 2;
    static constexpr int32_t kMaxPause = 64;

    // argmax over k of E(k) / (1 + k w); 0 when no draft beats plain decoding.
    int32_t best() const {
        const double a = acceptance();
        int32_t best_k = 0;
        double best_speed = 1.0, expected = 1.0, a_pow = 1.0;
        for (int32_t k = 1; k <= max_; ++k) {
            a_pow *= a;
            expected += a_pow;
            const double speed = expected / (1.0 + k * cost_);
            if (speed > best_speed) {
                best_speed = speed;
                best_k = k;
            }
        }
        return best_k;
    }

    int32_t max_;
    int32_t min_;
    double cost_;
    double held_ = 2.0;    // decayed accepted tokens, with a prior of a = 2/3
    double failed_ = 1.0;  // decayed rejections (at most one per draft)
    int32_t pause_ = 0;
    int32_t backoff_ = kMinPause;
    bool probing_ = false;
};

}  // namespace tessera
