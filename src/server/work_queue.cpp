// Worker threads of the HTTP server.
#include "server/work_queue.h"

#include <utility>

namespace tessera {

WorkQueue::WorkQueue(int n_threads) {
    for (int i = 0; i < n_threads; ++i) threads_.emplace_back([this] { run(); });
}

void WorkQueue::post(std::function<void()> task) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (stopping_) return;
        tasks_.push_back(std::move(task));
    }
    wake_.notify_one();
}

void WorkQueue::stop() {
    std::deque<std::function<void()>> dropped;
    {
        std::lock_guard<std::mutex> lock(mu_);
        stopping_ = true;
        dropped.swap(tasks_);
    }
    wake_.notify_all();
    for (std::thread& t : threads_) {
        if (t.joinable()) t.join();
    }
}

void WorkQueue::run() {
    for (;;) {
        std::function<void()> task;
        {
            std::unique_lock<std::mutex> lock(mu_);
            wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
            if (stopping_) return;
            task = std::move(tasks_.front());
            tasks_.pop_front();
        }
        task();
    }
}

}  // namespace tessera
