// What `run`, `run --chat` and `chat` share: the model, its tokenizer and chat
// template, loaded once from command-line flags, and an Engine that generates
// for them the way it does for the server (one loop, one output path).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "cli/spec_flags.h"
#include "engine/engine.h"
#include "engine/request.h"
#include "model/model.h"
#include "template/model_chat_template.h"
#include "tokenizer/tokenizer.h"

namespace tessera {

struct GenerationFlags {
    std::string model_path;
    GenerationRequest request = default_request();  // sampling, max_tokens, stop strings, ignore_eos
    KvTypes kv_types{};
    int threads = default_threads();
    int64_t n_ctx = 4096;
    bool swa_full = false;  // EngineOptions::swa_full
    SpecFlags spec{};

    void add_to(CLI::App& app);

private:
    static GenerationRequest default_request() {
        GenerationRequest r;
        r.max_tokens = 128;
        return r;
    }
};

struct LoadedModel {
    std::unique_ptr<Model> model;
    std::unique_ptr<Tokenizer> tokenizer;
    ModelChatTemplate chat_template;
    std::unique_ptr<Engine> engine;  // declared last: stopped before the model it reads

    // Loads the model and starts an engine sized for flags.n_ctx tokens (at
    // most the model's training context). Errors are printed as one line
    // prefixed with `command`.
    static std::unique_ptr<LoadedModel> load(const GenerationFlags& flags, const char* command);
    // The model, tokenizer and chat template only (no engine): for `serve`,
    // which starts its own engine with the server's options.
    static std::unique_ptr<LoadedModel> load_files(const std::string& model_path, const char* command);
    // The same, with the error returned instead of printed.
    static Expected<std::unique_ptr<LoadedModel>> open_files(const std::string& model_path);
    // Renders messages (a JSON array) through the model's template and tokenizes it.
    Expected<std::vector<int32_t>> chat_prompt(const std::string& messages_json) const;
};

// What one generation did, from its final event.
struct GenerationStats {
    int64_t prompt_tokens = 0;
    int64_t cached_tokens = 0;      // prompt tokens the prefix cache supplied
    int64_t completion_tokens = 0;  // sampled tokens, an end-of-generation token included
    double prompt_seconds = 0.0;    // submit -> first sampled token
    double generate_seconds = 0.0;  // first -> last sampled token
};

// Submits `request` to the engine and streams its text to stdout as it
// arrives (and to *text_out when given); with report_speed, prompt and
// generation speed go to stderr. Errors are printed as one line prefixed
// with `command`; nullopt then.
std::optional<GenerationStats> generate_to_stdout(LoadedModel& loaded, GenerationRequest request, const char* command,
                                                  std::string* text_out = nullptr, bool report_speed = true);

}  // namespace tessera
