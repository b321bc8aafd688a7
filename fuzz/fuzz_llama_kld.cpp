// libFuzzer target: an arbitrary byte string as llama.cpp's
// --kl-divergence-base file that `tessera perplexity --kl-divergence` reads;
// a parsed file's every row is decoded and compared with a made-up row of
// logits, as the full-vocabulary statistics would.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "eval/llama_kld_file.h"
#include "eval/logprob_stats.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto ref = tessera::LlamaKldFile::from_bytes(std::span<const uint8_t>(data, size));
    if (!ref) return 0;
    std::vector<float> logits(ref->n_vocab());
    for (size_t v = 0; v < logits.size(); ++v) logits[v] = static_cast<float>(v % 7) - 3.0f;
    const tessera::RowSummary row = tessera::summarize_row(logits);
    tessera::ReferenceComparison compared;
    std::vector<float> log_probs;
    for (uint64_t p = 0; p < ref->n_positions(); ++p) {
        if (!ref->read_row(p, log_probs).ok()) return 0;
        const auto token = static_cast<size_t>(ref->tokens()[p % ref->tokens().size()]);
        compared.add(tessera::kl_full(log_probs, logits, row), tessera::argmax(log_probs) == row.argmax,
                     row.log_sum_exp - logits[token], -log_probs[token]);
    }
    (void)compared.kl();
    (void)compared.p_diff_rms();
    return 0;
}
