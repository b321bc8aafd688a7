// libFuzzer target: an arbitrary byte string as a `tessera perplexity
// --kl-divergence` reference file; a parsed file's every record is read and
// compared with a made-up row of logits, as the KL statistics would.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "eval/logprob_stats.h"
#include "eval/reference_logits.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto ref = tessera::ReferenceLogits::parse(std::span<const uint8_t>(data, size));
    if (!ref) return 0;
    if (ref->n_vocab() > (1u << 16)) return 0;  // keep each run's row small
    std::vector<float> logits(ref->n_vocab());
    for (size_t v = 0; v < logits.size(); ++v) logits[v] = static_cast<float>(v % 7) - 3.0f;
    const tessera::RowSummary row = tessera::summarize_row(logits);
    std::vector<double> kl;
    for (uint64_t p = 0; p < ref->n_positions(); ++p) {
        kl.push_back(tessera::kl_from_top(ref->top(p), logits, row) + ref->nll(p));
    }
    (void)tessera::summarize_kl(kl);
    return 0;
}
