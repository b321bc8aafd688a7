// The prefill + decode loop behind `tessera run`.
#include "engine/generate.h"

#include <chrono>

#include "sample/sampler.h"
#include "sample/stop_strings.h"

namespace tessera {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Expected<GenerateResult> generate(Model& model, const Tokenizer& tokenizer, std::span<const int32_t> prompt,
                                  const GenerateOptions& options, ThreadPool& pool,
                                  const std::function<bool(std::string_view)>& on_text) {
    const ModelConfig& cfg = model.config();
    if (prompt.empty()) return Status::error("the prompt is empty");
    TS_RETURN_IF_ERROR(options.sampling.validate(cfg.n_vocab));
    const int64_t n_ctx = options.n_ctx > 0 ? options.n_ctx : cfg.n_ctx_train;
    if (static_cast<int64_t>(prompt.size()) >= n_ctx) {
        return Status::error("the prompt has " + std::to_string(prompt.size()) + " tokens; the context holds " +
                             std::to_string(n_ctx));
    }
    TS_RETURN_IF_ERROR(check_kv_types(options.kv_types, cfg.head_dim));
    KvCache cache = model.make_kv_cache(n_ctx, options.kv_types);
    SequenceKv seq;
    Sampler sampler(options.sampling, cfg.n_vocab);
    for (int32_t t : prompt) sampler.accept(t);
    StopStringMatcher stops(options.stop);
    IncrementalDetokenizer detok(tokenizer);

    GenerateResult result;
    result.n_prompt = static_cast<int64_t>(prompt.size());
    std::vector<float> logits;
    auto t0 = std::chrono::steady_clock::now();
    TS_RETURN_IF_ERROR(model.forward(cache, seq, prompt, false, logits, pool));
    TS_RETURN_IF_ERROR(model.check_file());  // weights read as zeros: logits are junk
    result.prompt_seconds = seconds_since(t0);

    t0 = std::chrono::steady_clock::now();
    bool keep_going = true;
    bool stop_string_hit = false;
    while (keep_going) {
        if (static_cast<int32_t>(result.tokens.size()) >= options.max_tokens) break;
        TS_RETURN_IF_ERROR(check_logits(logits));
        const int32_t token = sampler.sample(logits);
        sampler.accept(token);
        if (!options.ignore_eos && tokenizer.is_eog(token)) {
            result.finish = FinishReason::Stop;
            break;
        }
        result.tokens.push_back(token);
        auto piece = stops.push(detok.push(token));
        if (!piece.emit.empty()) keep_going = on_text(piece.emit);
        if (piece.stopped) {
            result.finish = FinishReason::Stop;
            stop_string_hit = true;
            break;
        }
        if (seq.n_tokens + 1 >= n_ctx) break;
        if (static_cast<int32_t>(result.tokens.size()) >= options.max_tokens) break;
        const int32_t next[1] = {token};
        TS_RETURN_IF_ERROR(model.forward(cache, seq, next, false, logits, pool));
        TS_RETURN_IF_ERROR(model.check_file());
    }
    if (!stop_string_hit && keep_going) {
        // Text held back for a possible stop string or a partial character.
        auto tail = stops.push(detok.flush());
        std::string rest = tail.emit;
        if (tail.stopped) {
            result.finish = FinishReason::Stop;
        } else {
            rest += stops.flush();
        }
        if (!rest.empty()) on_text(rest);
    }
    result.generate_seconds = seconds_since(t0);
    return result;
}

}  // namespace tessera
