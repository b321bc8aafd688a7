// Implementation of the sampling chain's steps; see logits_processors.h for
// the definitions each one follows.
#include "sample/logits_processors.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/check.h"

namespace tessera {
namespace {

bool better(const TokenLogit& a, const TokenLogit& b) {
    if (a.logit != b.logit) return a.logit > b.logit;
    return a.id < b.id;
}

}  // namespace

void Candidates::reset_from(std::span<const float> logits) {
    items.resize(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) {
        TS_CHECK_MSG(!std::isnan(logits[i]), "NaN logit");
        items[i] = TokenLogit{static_cast<int32_t>(i), logits[i], 0.0f};
    }
    sorted = false;
    by_id = true;
}

void Candidates::sort() {
    if (sorted) return;
    std::sort(items.begin(), items.end(), better);
    sorted = true;
    by_id = false;
}

void Candidates::truncate(size_t n) {
    if (n >= items.size()) return;
    items.resize(n);
    by_id = false;
}

void apply_penalties(Candidates& c, std::span<const int32_t> window, float repeat,
                     float frequency, float presence, std::span<int32_t> counts) {
    TS_CHECK(c.by_id);
    TS_CHECK(counts.size() == c.items.size());
    for (int32_t t : window) ++counts[static_cast<size_t>(t)];
    // Second pass: penalise each distinct token once, then clear its count so
    // later repeats of it in the window are skipped and the scratch ends zero.
    for (int32_t t : window) {
        const int32_t n = counts[static_cast<size_t>(t)];
        if (n == 0) continue;
        counts[static_cast<size_t>(t)] = 0;
        float& l = c.items[static_cast<size_t>(t)].logit;
        l = l > 0.0f ? l / repeat : l * repeat;
        l -= static_cast<float>(n) * frequency + presence;
    }
}

void apply_logit_bias(Candidates& c, std::span<const std::pair<int32_t, float>> bias) {
    TS_CHECK(c.by_id);
    for (const auto& [id, b] : bias) {
        TS_CHECK(id >= 0 && static_cast<size_t>(id) < c.items.size());
        c.items[static_cast<size_t>(id)].logit += b;
    }
}

void top_k(Candidates& c, int32_t k) {
    if (k <= 0 || static_cast<size_t>(k) >= c.items.size()) return;
    if (!c.sorted) {
        std::partial_sort(c.items.begin(), c.items.begin() + k, c.items.end(), better);
        c.sorted = true;
    }
    c.truncate(static_cast<size_t>(k));
    c.by_id = false;
}

void softmax(Candidates& c) {
    TS_CHECK(!c.items.empty());
    float max_l = -std::numeric_limits<float>::infinity();
    for (const auto& t : c.items) max_l = std::max(max_l, t.logit);
    TS_CHECK_MSG(std::isfinite(max_l), "every candidate logit is -inf");
    double sum = 0.0;
    for (auto& t : c.items) {
        t.p = std::exp(t.logit - max_l);
        sum += t.p;
    }
    for (auto& t : c.items) t.p = static_cast<float>(t.p / sum);
}

void typical(Candidates& c, float p) {
    if (p >= 1.0f || c.items.size() <= 1) return;
    softmax(c);
    double entropy = 0.0;
    for (const auto& t : c.items) {
        if (t.p > 0.0f) entropy -= t.p * std::log(static_cast<double>(t.p));
    }
    auto distance = [entropy](const TokenLogit& t) {
        const double surprisal = t.p > 0.0f ? -std::log(static_cast<double>(t.p))
                                            : std::numeric_limits<double>::infinity();
        return std::abs(surprisal - entropy);
    };
    std::sort(c.items.begin(), c.items.end(), [&](const TokenLogit& a, const TokenLogit& b) {
        const double da = distance(a), db = distance(b);
        if (da != db) return da < db;
        return a.id < b.id;
    });
    double mass = 0.0;
    size_t keep = c.items.size();
    for (size_t i = 0; i < c.items.size(); ++i) {
        mass += c.items[i].p;
        if (mass > p) {
            keep = i + 1;
            break;
        }
    }
    c.truncate(keep);
    c.sorted = false;
    c.by_id = false;
    c.sort();
}

void top_p(Candidates& c, float p) {
    if (p >= 1.0f || c.items.size() <= 1) return;
    c.sort();
    softmax(c);
    double mass = 0.0;
    for (size_t i = 0; i < c.items.size(); ++i) {
        mass += c.items[i].p;
        if (mass >= p) {
            c.truncate(i + 1);
            return;
        }
    }
}

void min_p(Candidates& c, float p_min) {
    if (p_min <= 0.0f || c.items.size() <= 1) return;
    c.sort();
    // p_i >= p_min * p_max  <=>  logit_i >= logit_max + log(p_min).
    const float threshold = c.items.front().logit + std::log(p_min);
    size_t keep = 1;
    while (keep < c.items.size() && c.items[keep].logit >= threshold) ++keep;
    c.truncate(keep);
}

void apply_temperature(Candidates& c, float t) {
    TS_CHECK(t > 0.0f);
    for (auto& tok : c.items) tok.logit /= t;
}

int32_t pick_greedy(const Candidates& c) {
    TS_CHECK(!c.items.empty());
    const TokenLogit* best = &c.items.front();
    for (const auto& t : c.items) {
        if (better(t, *best)) best = &t;
    }
    return best->id;
}

int32_t pick_random(Candidates& c, std::mt19937_64& rng) {
    softmax(c);
    return draw(c, rng);
}

double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

int32_t draw(const Candidates& c, std::mt19937_64& rng) {
    const double u = uniform01(rng);
    double cum = 0.0;
    for (const auto& t : c.items) {
        cum += t.p;
        if (u < cum) return t.id;
    }
    // Rounding left the total a hair below u: take the last token with mass.
    for (auto it = c.items.rbegin(); it != c.items.rend(); ++it) {
        if (it->p > 0.0f) return it->id;
    }
    return c.items.back().id;
}

}  // namespace tessera
