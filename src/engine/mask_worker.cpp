#include "engine/mask_worker.h"

namespace tessera {

MaskWorker::MaskWorker(bool enabled) {
    if (enabled) thread_ = std::thread([this] { run(); });
}

MaskWorker::~MaskWorker() {
    if (!enabled()) return;
    {
        std::lock_guard<std::mutex> lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

void MaskWorker::start(const std::vector<GrammarConstraint*>& constraints) {
    if (!enabled() || constraints.empty()) return;
    {
        std::lock_guard<std::mutex> lock(mu_);
        work_ = constraints;
        busy_ = true;
    }
    cv_.notify_all();
}

void MaskWorker::wait() {
    if (!enabled()) return;
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !busy_; });
}

void MaskWorker::run() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
        cv_.wait(lock, [this] { return busy_ || stop_; });
        if (stop_) return;
        std::vector<GrammarConstraint*> work = std::move(work_);
        lock.unlock();
        for (GrammarConstraint* c : work) c->prepare();
        lock.lock();
        busy_ = false;
        cv_.notify_all();
    }
}

}  // namespace tessera
