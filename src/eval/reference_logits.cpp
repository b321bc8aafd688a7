// Reading, checking and writing reference log-probability files.
#include "eval/reference_logits.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

namespace tessera {
namespace {

constexpr char kMagic[4] = {'T', 'S', 'R', 'L'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 4 + 4 * 4 + 8 * 2;
// Beyond any real vocabulary; keeps record sizes far from overflow.
constexpr uint32_t kMaxVocab = 1u << 24;

template <class T>
T read_at(std::span<const uint8_t> bytes, size_t& at) {
    T v;
    std::memcpy(&v, bytes.data() + at, sizeof v);
    at += sizeof v;
    return v;
}

template <class T>
void append(std::vector<uint8_t>& out, T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    out.insert(out.end(), p, p + sizeof v);
}

}  // namespace

uint64_t scored_text_hash(std::span<const int32_t> tokens, int n_ctx, int n_chunks) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the values below
    const auto mix = [&](uint64_t v) {
        for (int b = 0; b < 8; ++b) h = (h ^ ((v >> (8 * b)) & 0xFF)) * 1099511628211ull;
    };
    mix(static_cast<uint64_t>(n_ctx));
    mix(static_cast<uint64_t>(n_chunks));
    for (int32_t t : tokens) mix(static_cast<uint32_t>(t));
    return h;
}

ReferenceLogits::ReferenceLogits(uint32_t n_vocab, uint32_t n_ctx, uint32_t top_k, uint64_t n_positions,
                                 uint64_t text_hash)
    : n_vocab_(n_vocab), n_ctx_(n_ctx), top_k_(top_k), n_positions_(n_positions), text_hash_(text_hash),
      nll_(n_positions), top_(n_positions * top_k) {}

Expected<ReferenceLogits> ReferenceLogits::parse(std::span<const uint8_t> bytes) {
    if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, 4) != 0) {
        return Status::error("not a tessera reference-logits file (bad magic or too short)");
    }
    size_t at = 4;
    const auto version = read_at<uint32_t>(bytes, at);
    const auto n_vocab = read_at<uint32_t>(bytes, at);
    const auto n_ctx = read_at<uint32_t>(bytes, at);
    const auto top_k = read_at<uint32_t>(bytes, at);
    const auto n_positions = read_at<uint64_t>(bytes, at);
    const auto text_hash = read_at<uint64_t>(bytes, at);
    if (version != kVersion) return Status::error("reference-logits file version " + std::to_string(version) + " (expected 1)");
    if (n_vocab == 0 || n_vocab > kMaxVocab) return Status::error("reference-logits file: bad vocabulary size");
    if (top_k == 0 || top_k > kMaxTopK || top_k > n_vocab) return Status::error("reference-logits file: bad top_k");
    const uint64_t record = 4 + 8ull * top_k;
    const uint64_t body = bytes.size() - kHeaderBytes;
    if (body % record != 0 || body / record != n_positions) {
        return Status::error("reference-logits file: size does not match its " + std::to_string(n_positions) +
                             " positions (truncated or corrupt)");
    }
    ReferenceLogits r(n_vocab, n_ctx, top_k, n_positions, text_hash);
    for (uint64_t p = 0; p < n_positions; ++p) {
        r.nll_[p] = read_at<float>(bytes, at);
        if (!(r.nll_[p] >= 0.0f) || !std::isfinite(r.nll_[p])) {
            return Status::error("reference-logits file: bad NLL at position " + std::to_string(p));
        }
        for (uint32_t k = 0; k < top_k; ++k) {
            const auto token = read_at<int32_t>(bytes, at);
            const auto lp = read_at<float>(bytes, at);
            if (token < 0 || static_cast<uint32_t>(token) >= n_vocab || !(lp <= 0.0f) || !std::isfinite(lp)) {
                return Status::error("reference-logits file: bad token or log-probability at position " +
                                     std::to_string(p));
            }
            r.top_[p * top_k + k] = {token, lp};
        }
    }
    return r;
}

Expected<ReferenceLogits> ReferenceLogits::load(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::error("cannot open '" + path + "'");
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto r = parse(bytes);
    if (!r.ok()) return Status::error(path + ": " + r.error());
    return r;
}

Status ReferenceLogits::save(const std::string& path) const {
    std::vector<uint8_t> out(kMagic, kMagic + 4);
    for (uint32_t v : {kVersion, n_vocab_, n_ctx_, top_k_}) append(out, v);
    append(out, n_positions_);
    append(out, text_hash_);
    for (uint64_t p = 0; p < n_positions_; ++p) {
        append(out, nll_[p]);
        for (const auto& [token, lp] : top(p)) {
            append(out, token);
            append(out, lp);
        }
    }
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return Status::error("cannot create '" + path + "'");
    const bool ok = std::fwrite(out.data(), 1, out.size(), f) == out.size();
    if (std::fclose(f) != 0 || !ok) return Status::error("cannot write '" + path + "'");
    return Status();
}

void ReferenceLogits::set(uint64_t position, std::span<const float> logits, int32_t next_token, double log_sum_exp) {
    nll_[position] = static_cast<float>(std::max(0.0, log_sum_exp - logits[static_cast<size_t>(next_token)]));
    std::vector<int32_t> ids(logits.size());
    for (size_t v = 0; v < ids.size(); ++v) ids[v] = static_cast<int32_t>(v);
    std::partial_sort(ids.begin(), ids.begin() + top_k_, ids.end(), [&](int32_t a, int32_t b) {
        return logits[static_cast<size_t>(a)] > logits[static_cast<size_t>(b)] || (logits[static_cast<size_t>(a)] == logits[static_cast<size_t>(b)] && a < b);
    });
    for (uint32_t k = 0; k < top_k_; ++k) {
        const double lp = logits[static_cast<size_t>(ids[k])] - log_sum_exp;
        top_[position * top_k_ + k] = {ids[k], static_cast<float>(std::min(0.0, lp))};
    }
}

}  // namespace tessera
