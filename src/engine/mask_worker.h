// The next step's grammar masks, computed on a thread of their own while the
// forward pass runs on the pool (issue 26, item 2). A mask depends only on
// its choice's grammar state, which the tokens sampled before the step fixed,
// so it can be ready when the logits are. Worth it only with a core to spare
// beside the pool's threads: otherwise the mask thread takes time from the
// forward pass, and the engine leaves the worker off (masks are then computed
// on the engine thread as each row is sampled).
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "sample/grammar_constraint.h"

namespace tessera {

class MaskWorker {
public:
    explicit MaskWorker(bool enabled);
    ~MaskWorker();
    MaskWorker(const MaskWorker&) = delete;
    MaskWorker& operator=(const MaskWorker&) = delete;

    bool enabled() const { return thread_.joinable(); }
    // Starts prepare() of each constraint (they must stay alive and
    // untouched until wait() returns); does nothing when disabled.
    void start(const std::vector<GrammarConstraint*>& constraints);
    // Returns once every started prepare() is done.
    void wait();

private:
    void run();

    std::mutex mu_;
    std::condition_variable cv_;
    std::vector<GrammarConstraint*> work_;
    bool busy_ = false;
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace tessera
