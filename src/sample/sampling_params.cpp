// Range checks for SamplingParams; the only place sampling input from a
// request is judged, so the sampler itself can assume sane values.
#include "sample/sampling_params.h"

#include <cmath>
#include <string>

namespace tessera {
namespace {

Status check_unit_interval(const char* name, float v) {
    if (!(v >= 0.0f && v <= 1.0f)) {  // also false for NaN
        return Status::error(std::string(name) + " must be in [0, 1], got " + std::to_string(v));
    }
    return ok_status();
}

Status check_finite(const char* name, float v) {
    if (!std::isfinite(v)) {
        return Status::error(std::string(name) + " must be a finite number");
    }
    return ok_status();
}

Status check_logit_bias(const std::vector<std::pair<int32_t, float>>& bias, int32_t n_vocab) {
    std::vector<bool> banned(static_cast<size_t>(n_vocab), false);
    int32_t n_banned = 0;
    for (const auto& [id, b] : bias) {
        if (id < 0 || id >= n_vocab) {
            return Status::error("logit_bias token id " + std::to_string(id) +
                                 " is outside the vocabulary [0, " + std::to_string(n_vocab) + ")");
        }
        if (std::isnan(b) || b == INFINITY) {
            return Status::error("logit_bias for token " + std::to_string(id) +
                                 " must be a number or -inf");
        }
        if (b == -INFINITY && !banned[static_cast<size_t>(id)]) {
            banned[static_cast<size_t>(id)] = true;
            ++n_banned;
        }
    }
    if (n_banned == n_vocab) {
        return Status::error("logit_bias bans every token; nothing could be sampled");
    }
    return ok_status();
}

}  // namespace

Status SamplingParams::validate(int32_t n_vocab) const {
    if (n_vocab <= 0) return Status::error("vocabulary is empty");
    TS_RETURN_IF_ERROR(check_finite("temperature", temperature));
    if (top_k < 0) return Status::error("top_k must be >= 0 (0 disables it)");
    TS_RETURN_IF_ERROR(check_unit_interval("top_p", top_p));
    TS_RETURN_IF_ERROR(check_unit_interval("min_p", min_p));
    TS_RETURN_IF_ERROR(check_unit_interval("typical_p", typical_p));
    TS_RETURN_IF_ERROR(check_finite("repeat_penalty", repeat_penalty));
    if (repeat_penalty <= 0.0f) return Status::error("repeat_penalty must be > 0 (1 disables it)");
    TS_RETURN_IF_ERROR(check_finite("presence_penalty", presence_penalty));
    TS_RETURN_IF_ERROR(check_finite("frequency_penalty", frequency_penalty));
    if (penalty_last_n < 0) {
        return Status::error("penalty_last_n must be >= 0 (0 disables penalties)");
    }
    return check_logit_bias(logit_bias, n_vocab);
}

}  // namespace tessera
