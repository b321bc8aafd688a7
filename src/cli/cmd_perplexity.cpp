// `tessera perplexity -m MODEL -f TEXT`: perplexity over a text, scored as
// llama.cpp's perplexity tool does (eval/chunked_scoring.h), with
// --save-logits / --kl-divergence to compare a model (a quantization, a KV
// type) against a reference run of the same text: tessera's own top-k file
// or llama.cpp's full-vocabulary --kl-divergence-base file.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/scoring_input.h"
#include "cli/kv_type_flags.h"
#include "eval/chunked_scoring.h"
#include "eval/llama_kld_file.h"
#include "eval/logprob_stats.h"
#include "eval/reference_logits.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace tessera {
namespace {

int fail(const std::string& message) {
    std::fprintf(stderr, "tessera perplexity: %s\n", message.c_str());
    return 1;
}

bool starts_like_llama_kld(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    uint8_t head[8] = {};
    in.read(reinterpret_cast<char*>(head), sizeof head);
    return in && is_llama_kld(head);
}

}  // namespace

int cmd_perplexity(int argc, char** argv) {
    CLI::App app{"Perplexity of a model over a text (second half of each context-sized chunk scored, as llama.cpp)",
                 "perplexity"};
    std::string model_path, text_path, save_path, kl_path;
    ChunkedScoringOptions options;
    int threads = default_threads();
    int top_k = 32;
    app.add_option("-m,--model", model_path, "GGUF model file")->required();
    app.add_option("-f,--file", text_path, "text file to score")->required();
    app.add_option("-c,--ctx-size", options.n_ctx, "tokens per chunk")->check(CLI::Range(4, 1 << 20));
    app.add_option("--chunks", options.max_chunks, "score at most this many chunks (0: all)")->check(CLI::NonNegativeNumber);
    app.add_option("--parallel", options.n_parallel, "chunks per forward pass")->check(CLI::Range(1, 256));
    app.add_option("-b,--batch-size", options.batch_tokens, "tokens per forward pass")->check(CLI::Range(1, 1 << 16));
    app.add_option("-t,--threads", threads, "compute threads")->check(CLI::Range(1, 256));
    app.add_option("--save-logits", save_path, "write this run's log-probabilities (a reference) to FILE, see --save-format");
    std::string save_format = "tessera";
    app.add_option("--save-format", save_format,
                   "--save-logits layout: tessera (top-k) or llama (every log-probability, llama.cpp's "
                   "--kl-divergence-base file, which llama-perplexity --kl-divergence reads)")
        ->check(CLI::IsMember({"tessera", "llama"}));
    app.add_option("--save-top-k", top_k, "tokens per position in --save-logits")
        ->check(CLI::Range(1, static_cast<int>(ReferenceLogits::kMaxTopK)));
    app.add_option("--kl-divergence", kl_path,
                   "compare against a --save-logits FILE, or llama.cpp's --kl-divergence-base FILE, of the same text");
    add_kv_type_flags(app, options.kv_types);
    if (auto code = parse_args(app, argc, argv)) return *code;

    auto model = Model::load(model_path);
    if (!model) return fail(model.error());
    if (Status st = check_kv_types(options.kv_types, (*model)->config().head_dim); !st.ok()) return fail(st.message());
    auto tokenizer = Tokenizer::from_gguf((*model)->gguf());
    if (!tokenizer) return fail(tokenizer.error());
    auto input = load_scoring_input(*tokenizer, text_path, options);
    if (!input) return fail(input.error());
    const std::vector<int32_t>& tokens = input->tokens;
    const int n_chunks = input->n_chunks;
    const uint64_t per_chunk = static_cast<uint64_t>(options.n_ctx - 1 - options.n_ctx / 2);
    const uint64_t n_positions = per_chunk * static_cast<uint64_t>(n_chunks);
    const uint64_t hash = scored_text_hash(std::span(tokens).first(static_cast<size_t>(n_chunks) * options.n_ctx),
                                           options.n_ctx, n_chunks);
    const auto n_vocab = static_cast<uint32_t>((*model)->config().n_vocab);

    std::optional<ReferenceLogits> reference;
    std::optional<LlamaKldFile> llama_reference;
    if (!kl_path.empty() && starts_like_llama_kld(kl_path)) {
        auto opened = LlamaKldFile::open(kl_path);
        if (!opened) return fail(opened.error());
        if (opened->n_vocab() != n_vocab) {
            return fail(kl_path + " has a vocabulary of " + std::to_string(opened->n_vocab()) + ", the model " +
                        std::to_string(n_vocab));
        }
        // A prefix of the file's chunks may be scored (a quicker run; llama.cpp
        // prints its running figures chunk by chunk, so they compare).
        if (opened->n_ctx() != static_cast<uint32_t>(options.n_ctx) || opened->n_chunk() < static_cast<uint32_t>(n_chunks)) {
            return fail(kl_path + " holds " + std::to_string(opened->n_chunk()) + " chunks of " +
                        std::to_string(opened->n_ctx()) + " tokens; run with -c " + std::to_string(opened->n_ctx()) +
                        " and at most --chunks " + std::to_string(opened->n_chunk()));
        }
        if (opened->n_chunk() > static_cast<uint32_t>(n_chunks)) {
            std::fprintf(stderr, "comparing the first %d of the reference's %u chunks\n", n_chunks, opened->n_chunk());
        }
        const size_t n_scored = static_cast<size_t>(n_chunks) * static_cast<size_t>(options.n_ctx);
        const auto scored = std::span(tokens).first(n_scored);
        if (!std::equal(scored.begin(), scored.end(), opened->tokens().begin())) {
            return fail(kl_path + " was made from other tokens (another text, or another tokenization of it)");
        }
        llama_reference = std::move(opened.value());
    } else if (!kl_path.empty()) {
        auto loaded = ReferenceLogits::load(kl_path);
        if (!loaded) return fail(loaded.error());
        if (loaded->n_vocab() != n_vocab || loaded->text_hash() != hash || loaded->n_positions() != n_positions) {
            return fail(kl_path + " was made from another text, context size, chunk count or vocabulary");
        }
        reference = std::move(loaded.value());
    }
    std::optional<ReferenceLogits> saved;
    std::optional<LlamaKldWriter> llama_saved;
    if (!save_path.empty() && save_format == "llama") {
        auto created = LlamaKldWriter::create(save_path, static_cast<uint32_t>(options.n_ctx), n_vocab,
                                              std::span(tokens).first(static_cast<size_t>(n_chunks) * options.n_ctx));
        if (!created) return fail(created.error());
        llama_saved = std::move(created.value());
    } else if (!save_path.empty()) {
        saved.emplace(n_vocab, static_cast<uint32_t>(options.n_ctx), static_cast<uint32_t>(std::min<int>(top_k, static_cast<int>(n_vocab))),
                      n_positions, hash);
    }

    std::fprintf(stderr, "%zu tokens; %d chunks of %d, %d per pass\n", tokens.size(), n_chunks, options.n_ctx,
                 std::min(options.n_parallel, n_chunks));
    PerplexityAccumulator ppl;
    ReferenceComparison compared;
    std::vector<float> reference_row;
    Status io_status;  // the first failed read or write of a full-vocabulary file
    ThreadPool pool(threads);
    const int first = options.n_ctx / 2;
    Status st = score_chunks(
        **model, tokens, options, pool,
        [&](const ScoredPosition& p) {
            const RowSummary row = summarize_row(p.logits);
            const double nll = row.log_sum_exp - p.logits[static_cast<size_t>(p.next_token)];
            ppl.add(nll);
            const uint64_t index = static_cast<uint64_t>(p.chunk) * per_chunk + static_cast<uint64_t>(p.position - first);
            if (saved) saved->set(index, p.logits, p.next_token, row.log_sum_exp);
            if (llama_saved && io_status.ok()) io_status = llama_saved->write_row(index, p.logits);
            if (reference) {
                compared.add(kl_from_top(reference->top(index), p.logits, row), reference->top(index)[0].first == row.argmax,
                             nll, reference->nll(index));
            }
            if (llama_reference && io_status.ok()) {
                io_status = llama_reference->read_row(index, reference_row);
                if (!io_status.ok()) return;
                compared.add(kl_full(reference_row, p.logits, row), argmax(reference_row) == row.argmax, nll,
                             -reference_row[static_cast<size_t>(p.next_token)]);
            }
        },
        [&](int chunk) {
            std::fprintf(stderr, "[%d/%d] ppl %.4f\r", chunk + 1, n_chunks, ppl.perplexity());
        });
    std::fprintf(stderr, "\n");
    if (!st.ok()) return fail(st.message());
    std::printf("perplexity: %.4f +/- %.4f (%lld tokens scored, %d chunks of %d)\n", ppl.perplexity(),
                ppl.perplexity_error(), static_cast<long long>(ppl.count()), n_chunks, options.n_ctx);
    if (!io_status.ok()) return fail(io_status.message());
    if (compared.count() > 0) {
        const KlSummary s = compared.kl();
        const double ref_ppl = compared.reference_perplexity().perplexity();
        const std::string over = reference ? "top-" + std::to_string(reference->top_k()) : "full vocabulary";
        const auto pct = [](Estimate e) { return std::make_pair(100.0 * e.value, 100.0 * e.error); };
        std::printf("reference perplexity: %.4f; delta: %+.4f\n", ref_ppl, ppl.perplexity() - ref_ppl);
        // %g: an engine against its own reference can sit below 1e-6.
        std::printf("KL divergence: mean %.6g +/- %.3g, median %.6g, p99 %.6g, max %.6g (%s)\n", compared.kl_mean().value,
                    compared.kl_mean().error, s.median, s.p99, s.max, over.c_str());
        const auto [top, top_err] = pct(compared.same_top());
        std::printf("top-1 agreement: %.3f +/- %.3f%%\n", top, top_err);
        const auto [dp, dp_err] = pct(compared.p_diff_mean());
        const auto [rms, rms_err] = pct(compared.p_diff_rms());
        std::printf("true-token probability change: mean %.3f +/- %.3f%%, RMS %.3f +/- %.3f%%\n", dp, dp_err, rms, rms_err);
    }
    if (saved) {
        if (Status s = saved->save(save_path); !s.ok()) return fail(s.message());
        std::fprintf(stderr, "saved the top-%u log-probabilities of %llu positions to %s\n", saved->top_k(),
                     static_cast<unsigned long long>(n_positions), save_path.c_str());
    }
    if (llama_saved) {
        std::fprintf(stderr, "saved every log-probability of %llu positions to %s (llama.cpp's layout)\n",
                     static_cast<unsigned long long>(n_positions), save_path.c_str());
    }
    return 0;
}

}  // namespace tessera
