// Loading and streaming helpers shared by the generating subcommands.
#include "cli/chat_session.h"

#include <cstdio>

#include "cli/kv_type_flags.h"
#include "template/chat_render.h"

namespace tessera {

void GenerationFlags::add_to(CLI::App& app) {
    GenerateOptions& o = options;
    app.add_option("-m,--model", model_path, "GGUF model file")->required();
    app.add_option("-n,--n-predict", o.max_tokens, "tokens to generate")->check(CLI::Range(0, 1 << 20));
    app.add_option("--temp", o.sampling.temperature, "temperature (0 = greedy)");
    app.add_option("--top-k", o.sampling.top_k, "top-k (0 = off)");
    app.add_option("--top-p", o.sampling.top_p, "top-p (1 = off)");
    app.add_option("--min-p", o.sampling.min_p, "min-p (0 = off)");
    app.add_option("--typical-p", o.sampling.typical_p, "typical-p (1 = off)");
    app.add_option("--repeat-penalty", o.sampling.repeat_penalty, "repetition penalty (1 = off)");
    app.add_option("--repeat-last-n", o.sampling.penalty_last_n, "penalty window in tokens");
    app.add_option("--presence-penalty", o.sampling.presence_penalty, "presence penalty");
    app.add_option("--frequency-penalty", o.sampling.frequency_penalty, "frequency penalty");
    app.add_option("--seed", o.sampling.seed, "random seed");
    app.add_option("--stop", o.stop, "stop string (repeatable)");
    app.add_flag("--ignore-eos", o.ignore_eos, "keep generating past end-of-generation tokens");
    app.add_option("-c,--ctx-size", n_ctx, "context size in tokens")->check(CLI::Range(int64_t{16}, int64_t{1} << 20));
    app.add_option("-t,--threads", threads, "compute threads")->check(CLI::Range(1, 256));
    add_kv_type_flags(app, o.kv_types);
}

std::unique_ptr<LoadedModel> LoadedModel::load(const GenerationFlags& flags, const char* command) {
    auto out = std::make_unique<LoadedModel>();
    auto model = Model::load(flags.model_path);
    if (!model) {
        std::fprintf(stderr, "tessera %s: %s\n", command, model.error().c_str());
        return nullptr;
    }
    out->model = std::move(*model);
    auto tokenizer = Tokenizer::from_gguf(out->model->gguf());
    if (!tokenizer) {
        std::fprintf(stderr, "tessera %s: %s\n", command, tokenizer.error().c_str());
        return nullptr;
    }
    out->tokenizer = std::make_unique<Tokenizer>(std::move(*tokenizer));
    auto tmpl = chat_template_from_gguf(out->model->gguf());
    if (!tmpl) {
        std::fprintf(stderr, "tessera %s: %s\n", command, tmpl.error().c_str());
        return nullptr;
    }
    out->chat_template = std::move(*tmpl);
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

bool generate_to_stdout(LoadedModel& loaded, const std::vector<int32_t>& prompt, const GenerateOptions& options,
                        ThreadPool& pool, const char* command, std::string* text_out, bool report_speed) {
    auto result = generate(*loaded.model, *loaded.tokenizer, prompt, options, pool, [&](std::string_view text) {
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
        if (text_out) text_out->append(text);
        return true;
    });
    std::printf("\n");
    std::fflush(stdout);  // before the stderr lines below, when both go to one terminal or pipe
    if (!result) {
        std::fprintf(stderr, "tessera %s: %s\n", command, result.error().c_str());
        return false;
    }
    if (!report_speed) return true;
    const auto& r = *result;
    const double n_gen = static_cast<double>(r.tokens.size());
    std::fprintf(stderr, "prompt: %lld tokens in %.3f s (%.1f t/s)\n", static_cast<long long>(r.n_prompt),
                 r.prompt_seconds, r.prompt_seconds > 0 ? static_cast<double>(r.n_prompt) / r.prompt_seconds : 0.0);
    std::fprintf(stderr, "generation: %.0f tokens in %.3f s (%.1f t/s)\n", n_gen, r.generate_seconds,
                 r.generate_seconds > 0 && n_gen > 1 ? (n_gen - 1) / r.generate_seconds : 0.0);
    return true;
}

}  // namespace tessera
