// `tessera run`: load a model, tokenize a prompt, stream generated text to
// stdout, and report prompt and generation speed on stderr.
#include <cstdio>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "engine/generate.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace tessera {

int cmd_run(int argc, char** argv) {
    CLI::App app{"Generate text from a prompt", "run"};
    std::string model_path, prompt;
    GenerateOptions opt;
    int threads = default_threads();
    bool parse_special = true;
    int64_t n_ctx = 4096;
    app.add_option("-m,--model", model_path, "GGUF model file")->required();
    app.add_option("-p,--prompt", prompt, "prompt text")->required();
    app.add_option("-n,--n-predict", opt.max_tokens, "tokens to generate")->check(CLI::Range(0, 1 << 20));
    app.add_option("--temp", opt.sampling.temperature, "temperature (0 = greedy)");
    app.add_option("--top-k", opt.sampling.top_k, "top-k (0 = off)");
    app.add_option("--top-p", opt.sampling.top_p, "top-p (1 = off)");
    app.add_option("--min-p", opt.sampling.min_p, "min-p (0 = off)");
    app.add_option("--typical-p", opt.sampling.typical_p, "typical-p (1 = off)");
    app.add_option("--repeat-penalty", opt.sampling.repeat_penalty, "repetition penalty (1 = off)");
    app.add_option("--repeat-last-n", opt.sampling.penalty_last_n, "penalty window");
    app.add_option("--presence-penalty", opt.sampling.presence_penalty, "presence penalty");
    app.add_option("--frequency-penalty", opt.sampling.frequency_penalty, "frequency penalty");
    app.add_option("--seed", opt.sampling.seed, "random seed");
    app.add_option("--stop", opt.stop, "stop string (repeatable)");
    app.add_flag("--ignore-eos", opt.ignore_eos, "keep generating past end-of-generation tokens");
    app.add_option("-c,--ctx-size", n_ctx, "context size in tokens")->check(CLI::Range(int64_t{16}, int64_t{1} << 20));
    app.add_option("-t,--threads", threads, "compute threads")->check(CLI::Range(1, 256));
    app.add_flag("!--no-parse-special", parse_special, "treat special-token text in the prompt as plain text");
    if (auto code = parse_args(app, argc, argv)) return *code;

    auto model = Model::load(model_path);
    if (!model) {
        std::fprintf(stderr, "tessera run: %s\n", model.error().c_str());
        return 1;
    }
    auto tokenizer = Tokenizer::from_gguf((*model)->gguf());
    if (!tokenizer) {
        std::fprintf(stderr, "tessera run: %s\n", tokenizer.error().c_str());
        return 1;
    }
    opt.n_ctx = std::min<int64_t>(n_ctx, (*model)->config().n_ctx_train);
    std::vector<int32_t> tokens = tokenizer->encode(prompt, true, parse_special);
    ThreadPool pool(threads);
    auto result = generate(**model, *tokenizer, tokens, opt, pool, [](std::string_view text) {
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
        return true;
    });
    std::printf("\n");
    if (!result) {
        std::fprintf(stderr, "tessera run: %s\n", result.error().c_str());
        return 1;
    }
    const auto& r = *result;
    const double n_gen = static_cast<double>(r.tokens.size());
    std::fprintf(stderr, "prompt: %lld tokens in %.3f s (%.1f t/s)\n", static_cast<long long>(r.n_prompt),
                 r.prompt_seconds, r.prompt_seconds > 0 ? static_cast<double>(r.n_prompt) / r.prompt_seconds : 0.0);
    std::fprintf(stderr, "generation: %.0f tokens in %.3f s (%.1f t/s)\n", n_gen, r.generate_seconds,
                 r.generate_seconds > 0 && n_gen > 1 ? (n_gen - 1) / r.generate_seconds : 0.0);
    return 0;
}

}  // namespace tessera
