// Reading llama.cpp's --kl-divergence-base files (see llama_kld_file.h).
#include "eval/llama_kld_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <utility>

namespace tessera {
namespace {

constexpr uint64_t kHeaderBytes = 8 + 4 * 3;

uint64_t row_values(uint32_t n_vocab) { return 2 * ((static_cast<uint64_t>(n_vocab) + 1) / 2) + 4; }

std::shared_ptr<int> own_fd(int fd) {
    return std::shared_ptr<int>(new int(fd), [](int* p) {
        ::close(*p);
        delete p;
    });
}

bool pwrite_all(int fd, const void* data, size_t n, uint64_t offset) {
    const auto* p = static_cast<const uint8_t*>(data);
    size_t done = 0;
    while (done < n) {
        const ssize_t w = ::pwrite(fd, p + done, n - done, static_cast<off_t>(offset + done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        done += static_cast<size_t>(w);
    }
    return true;
}

}  // namespace

bool is_llama_kld(std::span<const uint8_t> first_bytes) {
    return first_bytes.size() >= 8 && std::memcmp(first_bytes.data(), LlamaKldFile::kMagic, 8) == 0;
}

Expected<LlamaKldFile> LlamaKldFile::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::error("cannot open '" + path + "': " + std::strerror(errno));
    // The descriptor lives as long as the last copy of the reader below.
    auto owner = own_fd(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return Status::error("'" + path + "' is not a regular file");
    auto parsed = parse(static_cast<uint64_t>(st.st_size), [owner](uint64_t offset, std::span<uint8_t> out) {
        size_t done = 0;
        while (done < out.size()) {
            const ssize_t n = ::pread(*owner, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            done += static_cast<size_t>(n);
        }
        return true;
    });
    if (!parsed) return Status::error(path + ": " + parsed.error());
    return parsed;
}

Expected<LlamaKldFile> LlamaKldFile::from_bytes(std::span<const uint8_t> bytes) {
    return parse(bytes.size(), [bytes](uint64_t offset, std::span<uint8_t> out) {
        if (offset > bytes.size() || out.size() > bytes.size() - offset) return false;
        std::memcpy(out.data(), bytes.data() + offset, out.size());
        return true;
    });
}

Expected<LlamaKldFile> LlamaKldFile::parse(uint64_t size, ReadAt read_at) {
    uint8_t header[kHeaderBytes];
    if (size < kHeaderBytes || !read_at(0, header) || !is_llama_kld(header)) {
        return Status::error("not a llama.cpp --kl-divergence-base file (bad magic or too short)");
    }
    uint32_t n_ctx;
    int32_t n_vocab, n_chunk;
    std::memcpy(&n_ctx, header + 8, 4);
    std::memcpy(&n_vocab, header + 12, 4);
    std::memcpy(&n_chunk, header + 16, 4);
    // n_ctx >= 4 leaves every chunk a scored position; the bound keeps the
    // token count far from overflow.
    if (n_ctx < 4 || n_ctx > (1u << 24)) return Status::error("llama.cpp KL base: bad context size " + std::to_string(n_ctx));
    if (n_vocab <= 0 || static_cast<uint32_t>(n_vocab) > kMaxVocab) {
        return Status::error("llama.cpp KL base: bad vocabulary size " + std::to_string(n_vocab));
    }
    if (n_chunk <= 0 || n_chunk > (1 << 24)) return Status::error("llama.cpp KL base: bad chunk count " + std::to_string(n_chunk));

    LlamaKldFile f;
    f.n_ctx_ = n_ctx;
    f.n_vocab_ = static_cast<uint32_t>(n_vocab);
    f.n_chunk_ = static_cast<uint32_t>(n_chunk);
    const uint64_t n_tokens = static_cast<uint64_t>(n_ctx) * f.n_chunk_;
    f.rows_offset_ = kHeaderBytes + 4 * n_tokens;
    const uint64_t expected = f.rows_offset_ + f.n_positions() * row_values(f.n_vocab_) * 2;
    if (size != expected) {
        return Status::error("llama.cpp KL base: " + std::to_string(size) + " bytes where its header (n_ctx " +
                             std::to_string(n_ctx) + ", " + std::to_string(n_chunk) + " chunks, vocabulary " +
                             std::to_string(n_vocab) + ") needs " + std::to_string(expected) + " (truncated or corrupt)");
    }
    f.tokens_.resize(n_tokens);
    if (!read_at(kHeaderBytes, std::span<uint8_t>(reinterpret_cast<uint8_t*>(f.tokens_.data()), 4 * n_tokens))) {
        return Status::error("llama.cpp KL base: cannot read its tokens");
    }
    for (int32_t t : f.tokens_) {
        if (t < 0 || t >= n_vocab) return Status::error("llama.cpp KL base: token id " + std::to_string(t) + " out of range");
    }
    f.read_at_ = std::move(read_at);
    return f;
}

Status LlamaKldFile::read_row(uint64_t position, std::vector<float>& log_probs) const {
    if (position >= n_positions()) return Status::error("llama.cpp KL base: no position " + std::to_string(position));
    const uint64_t nv = row_values(n_vocab_);
    row_.resize(nv);
    if (!read_at_(rows_offset_ + position * nv * 2, std::span<uint8_t>(reinterpret_cast<uint8_t*>(row_.data()), nv * 2))) {
        return Status::error("llama.cpp KL base: cannot read position " + std::to_string(position));
    }
    float scale, min_log_prob;
    std::memcpy(&scale, row_.data(), 4);
    std::memcpy(&min_log_prob, row_.data() + 2, 4);
    // The writer's minimum is at most 16 nats under the top logit, whose
    // log-probability is -log(sum exp) >= -log(n_vocab), and q = 65535 is the
    // top token: so the row's largest log-probability, scale*65535 + minimum,
    // is <= 0 (up to f32 rounding) and the minimum is bounded below.
    const float floor = -17.0f - std::log(static_cast<float>(n_vocab_));
    if (!std::isfinite(scale) || scale < 0 || !std::isfinite(min_log_prob) || min_log_prob < floor ||
        scale * 65535.0f + min_log_prob > 1e-3f) {
        return Status::error("llama.cpp KL base: bad scale or minimum at position " + std::to_string(position));
    }
    log_probs.resize(n_vocab_);
    const uint16_t* q = row_.data() + 4;
    for (uint32_t v = 0; v < n_vocab_; ++v) log_probs[v] = scale * static_cast<float>(q[v]) + min_log_prob;
    return Status();
}

Expected<LlamaKldWriter> LlamaKldWriter::create(const std::string& path, uint32_t n_ctx, uint32_t n_vocab,
                                                std::span<const int32_t> tokens) {
    if (n_ctx < 4 || n_vocab == 0 || n_vocab > LlamaKldFile::kMaxVocab || tokens.empty() || tokens.size() % n_ctx != 0) {
        return Status::error("llama.cpp KL base: bad shape to write");
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return Status::error("cannot create '" + path + "': " + std::strerror(errno));
    LlamaKldWriter w;
    w.fd_ = own_fd(fd);
    w.path_ = path;
    w.n_vocab_ = n_vocab;
    w.rows_offset_ = kHeaderBytes + 4 * tokens.size();
    const auto n_vocab_i = static_cast<int32_t>(n_vocab);
    const auto n_chunk = static_cast<int32_t>(tokens.size() / n_ctx);
    w.n_rows_ = static_cast<uint64_t>(n_ctx - 1 - n_ctx / 2) * static_cast<uint64_t>(n_chunk);
    const bool ok = pwrite_all(fd, LlamaKldFile::kMagic, 8, 0) && pwrite_all(fd, &n_ctx, 4, 8) &&
                    pwrite_all(fd, &n_vocab_i, 4, 12) && pwrite_all(fd, &n_chunk, 4, 16) &&
                    pwrite_all(fd, tokens.data(), 4 * tokens.size(), kHeaderBytes) &&
                    ::ftruncate(fd, static_cast<off_t>(w.rows_offset_ + w.n_rows_ * row_values(n_vocab) * 2)) == 0;
    if (!ok) return Status::error("cannot write '" + path + "': " + std::strerror(errno));
    return w;
}

Status LlamaKldWriter::write_row(uint64_t position, std::span<const float> logits) {
    if (logits.size() != n_vocab_ || position >= n_rows_) {
        return Status::error("llama.cpp KL base: a row of the wrong vocabulary or beyond the file");
    }
    const auto [lo, hi] = std::minmax_element(logits.begin(), logits.end());
    const float max_logit = *hi;
    const float min_logit = std::max(*lo, max_logit - 16);
    double sum_exp = 0;
    for (float x : logits) sum_exp += std::exp(x - max_logit);
    const auto log_sum_exp = static_cast<float>(std::log(sum_exp));
    const float min_log_prob = min_logit - max_logit - log_sum_exp;
    const float scale = (max_logit - min_logit) / 65535.0f;
    row_.assign(row_values(n_vocab_), 0);
    std::memcpy(row_.data(), &scale, 4);
    std::memcpy(row_.data() + 2, &min_log_prob, 4);
    if (scale > 0) {
        const float inv_scale = 1 / scale;
        for (uint32_t v = 0; v < n_vocab_; ++v) {
            if (logits[v] > min_logit) row_[4 + v] = static_cast<uint16_t>(std::lrint(inv_scale * (logits[v] - min_logit)));
        }
    }
    const uint64_t bytes = row_.size() * 2;
    if (!pwrite_all(*fd_, row_.data(), bytes, rows_offset_ + position * bytes)) {
        return Status::error("cannot write '" + path_ + "': " + std::strerror(errno));
    }
    return Status();
}

}  // namespace tessera
