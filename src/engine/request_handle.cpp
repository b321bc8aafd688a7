// Event queue between the engine thread and a request's consumer.
#include "engine/request_handle.h"

namespace tessera {

const char* finish_reason_name(FinishReason r) {
    switch (r) {
        case FinishReason::Stop: return "stop";
        case FinishReason::Length: return "length";
        case FinishReason::Cancelled: return "cancelled";
        case FinishReason::Error: return "error";
        case FinishReason::None: break;
    }
    return "none";
}

std::optional<StreamEvent> RequestHandle::next(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, timeout, [&] { return !events_.empty(); })) return std::nullopt;
    StreamEvent e = std::move(events_.front());
    events_.pop_front();
    if (e.finish != FinishReason::None) --open_choices_;
    return e;
}

bool RequestHandle::finished() const {
    std::lock_guard<std::mutex> lock(mu_);
    return open_choices_ <= 0 && events_.empty();
}

void RequestHandle::set_listener(std::function<void()> listener) {
    std::lock_guard<std::mutex> lock(mu_);
    listener_ = std::make_shared<const std::function<void()>>(std::move(listener));
}

void RequestHandle::push(StreamEvent event) {
    std::shared_ptr<const std::function<void()>> listener;
    {
        std::lock_guard<std::mutex> lock(mu_);
        events_.push_back(std::move(event));
        listener = listener_;
    }
    cv_.notify_one();
    if (listener) (*listener)();
}

}  // namespace tessera
