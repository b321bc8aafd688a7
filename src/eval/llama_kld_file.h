// llama.cpp's full-vocabulary reference file, the one `llama-perplexity
// --kl-divergence-base FILE` writes, read position by position so a 5 GB
// file is streamed, never loaded. Reading it lets `tessera perplexity
// --kl-divergence` measure tessera and llama.cpp against one reference.
// The file is untrusted input: the header, the size and every row's scale
// are checked, and any mismatch is an error.
//
// A run may score a prefix of the chunks (tessera perplexity checks their
// tokens).
//
// Layout (little-endian, learnt from llama.cpp's tools/perplexity): the 8
// bytes "_logits_", u32 n_ctx, i32 n_vocab, i32 n_chunk, the i32 tokens of
// all chunks (n_ctx * n_chunk, as tokenized: before BOS replaces each chunk's
// first token); then, chunk after chunk, one row per scored position (the
// n_ctx - 1 - n_ctx/2 positions from n_ctx/2 on) of nv = 2*((n_vocab+1)/2)+4
// u16 values: f32 scale and f32 min_log_prob in the first four, then one u16
// q per token, log p = scale*q + min_log_prob (q = 0 for every token more
// than 16 nats below the top logit), padded to an even count.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace tessera {

class LlamaKldFile {
public:
    static constexpr char kMagic[8] = {'_', 'l', 'o', 'g', 'i', 't', 's', '_'};
    // Beyond any real vocabulary; keeps row sizes far from overflow.
    static constexpr uint32_t kMaxVocab = 1u << 24;

    static Expected<LlamaKldFile> open(const std::string& path);
    // The same checks over bytes in memory (tests, fuzzing); `bytes` must
    // outlive the result.
    static Expected<LlamaKldFile> from_bytes(std::span<const uint8_t> bytes);

    uint32_t n_ctx() const { return n_ctx_; }
    uint32_t n_vocab() const { return n_vocab_; }
    uint32_t n_chunk() const { return n_chunk_; }
    uint64_t positions_per_chunk() const { return n_ctx_ - 1 - n_ctx_ / 2; }
    uint64_t n_positions() const { return positions_per_chunk() * n_chunk_; }
    // The tokens the reference scored, n_ctx * n_chunk of them.
    std::span<const int32_t> tokens() const { return tokens_; }

    // Decodes row `position` (chunk * positions_per_chunk() + index within
    // the chunk's scored half) into n_vocab log-probabilities. Errors: a
    // failed read, a non-finite or negative scale, a non-finite or positive
    // minimum.
    Status read_row(uint64_t position, std::vector<float>& log_probs) const;

private:
    // Fills `out` from byte `offset`; false when the bytes are not there.
    using ReadAt = std::function<bool(uint64_t offset, std::span<uint8_t> out)>;
    static Expected<LlamaKldFile> parse(uint64_t size, ReadAt read_at);
    LlamaKldFile() = default;

    ReadAt read_at_;  // from open(), it owns the file descriptor
    uint32_t n_ctx_ = 0, n_vocab_ = 0, n_chunk_ = 0;
    uint64_t rows_offset_ = 0;
    std::vector<int32_t> tokens_;
    mutable std::vector<uint16_t> row_;
};

// Writes the same layout from tessera's logits, so llama.cpp's
// `llama-perplexity --kl-divergence` can compare against a tessera run.
class LlamaKldWriter {
public:
    // tokens: n_ctx * n_chunk, as tokenized (before BOS replaces each
    // chunk's first token), as llama.cpp writes them.
    static Expected<LlamaKldWriter> create(const std::string& path, uint32_t n_ctx, uint32_t n_vocab,
                                           std::span<const int32_t> tokens);
    // Encodes row `position` (numbered as LlamaKldFile::read_row's) from a
    // row of logits as llama.cpp does: log-softmax, the top 16 nats on a u16
    // grid. Rows may come in any order.
    Status write_row(uint64_t position, std::span<const float> logits);

private:
    LlamaKldWriter() = default;
    std::shared_ptr<int> fd_;
    std::string path_;
    uint32_t n_vocab_ = 0;
    uint64_t rows_offset_ = 0, n_rows_ = 0;
    std::vector<uint16_t> row_;
};

// Whether the first bytes of a file are LlamaKldFile's magic.
bool is_llama_kld(std::span<const uint8_t> first_bytes);

}  // namespace tessera
