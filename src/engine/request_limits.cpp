// RequestLimits::check (engine/request.h): the per-request caps the engine
// enforces on submit and the server reads to refuse requests up front.
#include <string>

#include "engine/request.h"

namespace tessera {

Status RequestLimits::check(const GenerationRequest& r) const {
    const auto over = [](const std::string& what) { return Status::error(ErrorKind::LimitExceeded, what); };
    if (r.n < 1 || r.n > max_n) return over("n must be between 1 and " + std::to_string(max_n));
    if (r.top_logprobs > max_top_logprobs) {
        return over("top_logprobs must be at most " + std::to_string(max_top_logprobs));
    }
    if (r.stop.size() > max_stop) return over("at most " + std::to_string(max_stop) + " stop strings are allowed");
    for (const std::string& s : r.stop) {
        if (s.size() > max_stop_bytes) {
            return over("each stop string may be at most " + std::to_string(max_stop_bytes) + " bytes");
        }
    }
    if (r.sampling.logit_bias.size() > max_logit_bias) {
        return over("at most " + std::to_string(max_logit_bias) + " logit_bias entries are allowed");
    }
    return ok_status();
}

}  // namespace tessera
