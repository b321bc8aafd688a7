// StopStringMatcher: earliest-match search over the held-back text plus the
// new chunk, then hold back the longest tail that could still begin a stop.
#include "sample/stop_strings.h"

#include <algorithm>
#include <utility>

namespace tessera {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) {
    for (auto& s : stops) {
        if (!s.empty()) stops_.push_back(std::move(s));
    }
}

size_t StopStringMatcher::held_suffix_length() const {
    const std::string_view text = pending_;
    size_t best = 0;
    for (const auto& stop : stops_) {
        // Longest proper prefix of `stop` that is a suffix of `text`.
        const size_t max_len = std::min(stop.size() - 1, text.size());
        for (size_t len = max_len; len > best; --len) {
            if (text.substr(text.size() - len) == std::string_view(stop).substr(0, len)) {
                best = len;
                break;
            }
        }
    }
    return best;
}

StopStringMatcher::Result StopStringMatcher::push(std::string_view new_text) {
    if (stopped_) return {"", true};
    pending_.append(new_text);
    size_t first = std::string::npos;
    for (const auto& stop : stops_) {
        first = std::min(first, pending_.find(stop));
    }
    if (first != std::string::npos) {
        stopped_ = true;
        std::string emit = pending_.substr(0, first);
        pending_.clear();
        return {std::move(emit), true};
    }
    const size_t hold = held_suffix_length();
    std::string emit = pending_.substr(0, pending_.size() - hold);
    pending_.erase(0, pending_.size() - hold);
    return {std::move(emit), false};
}

std::string StopStringMatcher::flush() {
    std::string out = std::move(pending_);
    pending_.clear();
    return out;
}

}  // namespace tessera
