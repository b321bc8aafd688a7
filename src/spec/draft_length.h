// Per-sequence draft length that follows the measured acceptance: grows
// while whole drafts are accepted, and after a rejection drops to one past
// the accepted run, so a sequence whose drafts keep failing spends little
// on verification and one that copies its prompt soon drafts the maximum.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tessera {

class DraftLength {
public:
    explicit DraftLength(int32_t max) : max_(std::max(max, 0)), k_(max_) {}

    int32_t next() const { return k_; }

    void update(int32_t drafted, int32_t accepted) {
        if (drafted <= 0) return;  // nothing was proposed: nothing measured
        k_ = accepted >= drafted ? std::min(max_, k_ + 2) : std::clamp(accepted + 1, 1, max_);
    }

private:
    int32_t max_;
    int32_t k_;
};

}  // namespace tessera
