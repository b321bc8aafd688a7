// Loading, the CLI's engine and streaming helpers shared by the generating
// subcommands.
#include "cli/chat_session.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "cli/kv_type_flags.h"
#include "template/chat_render.h"

namespace tessera {
namespace {

// One user at a time: prefill runs in chunks of this many tokens (the size
// Model::forward uses, so `run` prints what it printed before it went
// through the engine), and no fairness split between prompts is needed.
constexpr int32_t kPrefillChunk = 256;

EngineOptions cli_engine_options(const GenerationFlags& flags, const ModelConfig& config) {
    EngineOptions o;
    o.threads = flags.threads;
    o.kv_types = flags.kv_types;
    o.max_context = std::min<int64_t>(flags.n_ctx, config.n_ctx_train);
    // One spare block: a sequence whose short last run sits in half a block
    // takes a whole one before it gives the half back, so a context of
    // exactly n blocks needs n + 1 to be filled to the last token.
    o.ctx_size = o.max_context + o.block_size;
    o.max_batch_tokens = kPrefillChunk;
    o.max_seqs = 1;  // sizes a sliding-window model's window pool for this one sequence
    o.swa_full = flags.swa_full;
    o.prefill_share = 0;
    o.prefix_cache = true;  // `chat` reuses its earlier turns
    return o;
}

}  // namespace

void GenerationFlags::add_to(CLI::App& app) {
    GenerationRequest& r = request;
    app.add_option("-m,--model", model_path, "GGUF model file")->required();
    app.add_option("-n,--n-predict", r.max_tokens, "tokens to generate")->check(CLI::Range(0, 1 << 20));
    app.add_option("--temp", r.sampling.temperature, "temperature (0 = greedy)");
    app.add_option("--top-k", r.sampling.top_k, "top-k (0 = off)");
    app.add_option("--top-p", r.sampling.top_p, "top-p (1 = off)");
    app.add_option("--min-p", r.sampling.min_p, "min-p (0 = off)");
    app.add_option("--typical-p", r.sampling.typical_p, "typical-p (1 = off)");
    app.add_option("--repeat-penalty", r.sampling.repeat_penalty, "repetition penalty (1 = off)");
    app.add_option("--repeat-last-n", r.sampling.penalty_last_n, "penalty window in tokens");
    app.add_option("--presence-penalty", r.sampling.presence_penalty, "presence penalty");
    app.add_option("--frequency-penalty", r.sampling.frequency_penalty, "frequency penalty");
    app.add_option("--seed", r.sampling.seed, "random seed");
    app.add_option("--stop", r.stop, "stop string (repeatable)");
    app.add_flag("--ignore-eos", r.ignore_eos, "keep generating past end-of-generation tokens");
    app.add_option("-c,--ctx-size", n_ctx, "context size in tokens")->check(CLI::Range(int64_t{16}, int64_t{1} << 20));
    app.add_option("-t,--threads", threads, "compute threads")->check(CLI::Range(1, 256));
    add_kv_type_flags(app, kv_types);
    app.add_flag("--swa-full", swa_full, kSwaFullHelp);
    spec.add_to(app);
}

Expected<std::unique_ptr<LoadedModel>> LoadedModel::open_files(const std::string& model_path) {
    auto out = std::make_unique<LoadedModel>();
    auto model = Model::load(model_path);
    if (!model) return model.status();
    out->model = std::move(*model);
    auto tokenizer = Tokenizer::from_gguf(out->model->gguf());
    if (!tokenizer) return tokenizer.status();
    out->tokenizer = std::make_unique<Tokenizer>(std::move(*tokenizer));
    auto tmpl = chat_template_from_gguf(out->model->gguf());
    if (!tmpl) return tmpl.status();
    out->chat_template = std::move(*tmpl);
    return out;
}

std::unique_ptr<LoadedModel> LoadedModel::load_files(const std::string& model_path, const char* command) {
    auto out = open_files(model_path);
    if (!out) {
        std::fprintf(stderr, "tessera %s: %s\n", command, out.error().c_str());
        return nullptr;
    }
    return std::move(*out);
}

std::unique_ptr<LoadedModel> LoadedModel::load(const GenerationFlags& flags, const char* command) {
    auto out = load_files(flags.model_path, command);
    if (!out) return nullptr;
    EngineOptions options = cli_engine_options(flags, out->model->config());
    auto spec = spec_options(flags.spec, *out->tokenizer, flags.threads, options.ctx_size, flags.kv_types);
    if (!spec) {
        std::fprintf(stderr, "tessera %s: %s\n", command, spec.error().c_str());
        return nullptr;
    }
    options.spec = std::move(*spec);
    auto engine = Engine::start(*out->model, *out->tokenizer, options);
    if (!engine) {
        std::fprintf(stderr, "tessera %s: %s\n", command, engine.error().c_str());
        return nullptr;
    }
    out->engine = std::move(*engine);
    return out;
}

Expected<std::vector<int32_t>> LoadedModel::chat_prompt(const std::string& messages_json) const {
    auto messages = parse_chat_json(messages_json, "messages");
    if (!messages) return messages.status();
    ChatRenderInput in;
    in.messages = std::move(*messages);
    // Compiled per turn: a CLI conversation renders a few times a minute.
    auto text = ChatTemplate(chat_template.source, chat_template.bos, chat_template.eos).render(std::move(in));
    if (!text) return text.status();
    // The template writes bos itself where the model wants it.
    return tokenizer->encode(*text, {.parse_special = true});
}

std::optional<GenerationStats> generate_to_stdout(LoadedModel& loaded, GenerationRequest request, const char* command,
                                                  std::string* text_out, bool report_speed) {
    if (request.max_tokens == 0) {  // nothing to generate: the engine refuses such requests
        std::printf("\n");
        return GenerationStats{};
    }
    const EngineMetrics& metrics = loaded.engine->metrics();
    const uint64_t drafted_before = metrics.spec_drafted_tokens.load(std::memory_order_relaxed);
    const uint64_t accepted_before = metrics.spec_accepted_tokens.load(std::memory_order_relaxed);
    auto submitted = loaded.engine->submit(std::move(request));
    std::string error;
    GenerationStats stats;
    int64_t n_text_tokens = 0;  // tokens whose text was streamed (end-of-generation tokens excluded)
    if (!submitted) error = submitted.error();
    while (submitted && !(*submitted)->finished()) {
        auto e = (*submitted)->next(std::chrono::seconds(1));
        if (!e) continue;
        if (!e->text.empty()) {
            std::fwrite(e->text.data(), 1, e->text.size(), stdout);
            std::fflush(stdout);
            if (text_out) text_out->append(e->text);
        }
        n_text_tokens += static_cast<int64_t>(e->tokens.size());
        if (e->finish == FinishReason::None) continue;
        if (e->finish == FinishReason::Error) error = e->error;
        stats.prompt_tokens = e->prompt_tokens;
        stats.cached_tokens = e->cached_tokens;
        stats.completion_tokens = e->completion_tokens;
        stats.prompt_seconds = e->seconds_to_first_token;
        stats.generate_seconds = e->seconds_decoding;
    }
    std::printf("\n");
    std::fflush(stdout);  // before the stderr lines below, when both go to one terminal or pipe
    if (!error.empty()) {
        std::fprintf(stderr, "tessera %s: %s\n", command, error.c_str());
        return std::nullopt;
    }
    if (!report_speed) return stats;
    const auto& s = stats;
    const double n_prompt = static_cast<double>(s.prompt_tokens);
    const double n_sampled = static_cast<double>(s.completion_tokens);
    std::fprintf(stderr, "prompt: %lld tokens in %.3f s (%.1f t/s)\n", static_cast<long long>(s.prompt_tokens),
                 s.prompt_seconds, s.prompt_seconds > 0 ? n_prompt / s.prompt_seconds : 0.0);
    std::fprintf(stderr, "generation: %lld tokens in %.3f s (%.1f t/s)\n", static_cast<long long>(n_text_tokens),
                 s.generate_seconds, s.generate_seconds > 0 && n_sampled > 1 ? (n_sampled - 1) / s.generate_seconds : 0.0);
    if (loaded.engine->options().spec.drafter) {
        const uint64_t drafted = metrics.spec_drafted_tokens.load(std::memory_order_relaxed) - drafted_before;
        const uint64_t accepted = metrics.spec_accepted_tokens.load(std::memory_order_relaxed) - accepted_before;
        std::fprintf(stderr, "speculation (%s): %llu drafted, %llu accepted (%.0f%%)\n", metrics.spec_drafter,
                     static_cast<unsigned long long>(drafted), static_cast<unsigned long long>(accepted),
                     drafted > 0 ? 100.0 * static_cast<double>(accepted) / static_cast<double>(drafted) : 0.0);
    }
    return stats;
}

}  // namespace tessera
