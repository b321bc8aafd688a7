// `tessera imatrix -m MODEL -f TEXT -o FILE`: runs a calibration text
// through the model in context-sized chunks, as `tessera perplexity` does,
// and writes each layer weight's per-column sums of squared inputs as an
// importance matrix for `tessera quantize --imatrix` (quantize/imatrix.h;
// llama.cpp's GGUF layout, so llama-quantize reads it too).
#include <cstdio>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/scoring_input.h"
#include "eval/chunked_scoring.h"
#include "eval/logprob_stats.h"
#include "model/activation_stats.h"
#include "model/model.h"
#include "quantize/imatrix.h"
#include "tokenizer/tokenizer.h"

namespace tessera {
namespace {

int fail(const std::string& message) {
    std::fprintf(stderr, "tessera imatrix: %s\n", message.c_str());
    return 1;
}

// The gathered statistics as an importance matrix: weights that saw no
// input (token embeddings, norms) are left out.
Imatrix to_imatrix(const ActivationStats& stats) {
    Imatrix out;
    for (const ActivationStats::Entry& e : stats.entries()) {
        bool used = false;
        for (int64_t c : e.counts) used = used || c > 0;
        if (!used) continue;
        ImatrixTensor t{e.cols, e.n_mat, std::vector<float>(e.sum2.begin(), e.sum2.end()), {}};
        for (int64_t c : e.counts) t.counts.push_back(static_cast<float>(c));
        out.tensors[e.name] = std::move(t);
    }
    return out;
}

}  // namespace

int cmd_imatrix(int argc, char** argv) {
    CLI::App app{"Importance matrix of a model over a calibration text (for tessera quantize --imatrix)", "imatrix"};
    std::string model_path, text_path, out_path = "imatrix.gguf";
    ChunkedScoringOptions options;
    int threads = default_threads();
    app.add_option("-m,--model", model_path, "GGUF model file (ideally the unquantized one)")->required();
    app.add_option("-f,--file", text_path, "calibration text")->required();
    app.add_option("-o,--output", out_path, "importance matrix to write (GGUF)");
    app.add_option("-c,--ctx-size", options.n_ctx, "tokens per chunk")->check(CLI::Range(4, 1 << 20));
    app.add_option("--chunks", options.max_chunks, "use at most this many chunks (0: all)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--parallel", options.n_parallel, "chunks per forward pass")->check(CLI::Range(1, 256));
    app.add_option("-b,--batch-size", options.batch_tokens, "tokens per forward pass")->check(CLI::Range(1, 1 << 16));
    app.add_option("-t,--threads", threads, "compute threads")->check(CLI::Range(1, 256));
    if (auto code = parse_args(app, argc, argv)) return *code;

    auto model = Model::load(model_path);
    if (!model) return fail(model.error());
    auto tokenizer = Tokenizer::from_gguf((*model)->gguf());
    if (!tokenizer) return fail(tokenizer.error());
    auto input = load_scoring_input(*tokenizer, text_path, options);
    if (!input) return fail(input.error());
    const std::vector<int32_t>& tokens = input->tokens;
    const int n_chunks = input->n_chunks;

    ActivationStats stats((*model)->gguf());
    (*model)->set_activation_stats(&stats);
    std::fprintf(stderr, "%zu tokens; %d chunks of %d\n", tokens.size(), n_chunks, options.n_ctx);
    PerplexityAccumulator ppl;
    ThreadPool pool(threads);
    const Status st = score_chunks(
        **model, tokens, options, pool,
        [&](const ScoredPosition& p) {
            ppl.add(summarize_row(p.logits).log_sum_exp - p.logits[static_cast<size_t>(p.next_token)]);
        },
        [&](int chunk) { std::fprintf(stderr, "[%d/%d] ppl %.4f\r", chunk + 1, n_chunks, ppl.perplexity()); });
    (*model)->set_activation_stats(nullptr);
    std::fprintf(stderr, "\n");
    if (!st.ok()) return fail(st.message());

    Imatrix imatrix = to_imatrix(stats);
    imatrix.datasets = {text_path};
    imatrix.chunk_count = static_cast<uint32_t>(n_chunks);
    imatrix.chunk_size = static_cast<uint32_t>(options.n_ctx);
    if (Status s = write_imatrix(imatrix, out_path); !s.ok()) return fail(s.message());
    std::printf("wrote %s: %zu weight tensors, %d chunks of %d tokens (perplexity %.4f)\n", out_path.c_str(),
                imatrix.tensors.size(), n_chunks, options.n_ctx, ppl.perplexity());
    return 0;
}

}  // namespace tessera
