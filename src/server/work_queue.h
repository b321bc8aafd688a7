// A fixed set of threads that run the routes' handlers (JSON parsing, chat
// templates, tokenizing: work too long for the transport's I/O thread).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera {

class WorkQueue {
public:
    explicit WorkQueue(int n_threads);
    ~WorkQueue() { stop(); }
    WorkQueue(const WorkQueue&) = delete;
    WorkQueue& operator=(const WorkQueue&) = delete;

    // Thread-safe. Tasks posted after stop() are dropped.
    void post(std::function<void()> task);
    // Lets running tasks finish, drops queued ones, joins the threads.
    void stop();

private:
    void run();

    std::mutex mu_;
    std::condition_variable wake_;
    std::deque<std::function<void()>> tasks_;
    bool stopping_ = false;
    std::vector<std::thread> threads_;
};

}  // namespace tessera
