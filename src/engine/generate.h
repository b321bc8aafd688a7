// Single-sequence generation: prefill a prompt, then sample token by token
// until EOS/EOT, max_tokens or a stop string, streaming text as it is decoded.
// The batched, multi-request engine loop is built on the same pieces.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/thread_pool.h"
#include "engine/request.h"
#include "model/model.h"
#include "sample/sampling_params.h"
#include "tokenizer/tokenizer.h"

namespace tessera {

struct GenerateOptions {
    int32_t max_tokens = 128;
    bool ignore_eos = false;
    std::vector<std::string> stop;
    SamplingParams sampling;
    int64_t n_ctx = 0;  // 0: the model's training context
    KvTypes kv_types{};  // K/V storage types
};

struct GenerateResult {
    std::vector<int32_t> tokens;  // generated ids (stop-string tokens included)
    FinishReason finish = FinishReason::Length;
    int64_t n_prompt = 0;
    double prompt_seconds = 0.0;
    double generate_seconds = 0.0;
};

// on_text receives text pieces (never half a UTF-8 character, never any part
// of a stop string); returning false ends generation early.
Expected<GenerateResult> generate(Model& model, const Tokenizer& tokenizer, std::span<const int32_t> prompt,
                                  const GenerateOptions& options, ThreadPool& pool,
                                  const std::function<bool(std::string_view)>& on_text);

}  // namespace tessera
