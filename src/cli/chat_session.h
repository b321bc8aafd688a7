// What `run --chat` and `chat` share: the model, its tokenizer and chat
// template, and the sampling options, loaded once from command-line flags.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "core/thread_pool.h"
#include "engine/generate.h"
#include "model/model.h"
#include "template/model_chat_template.h"
#include "tokenizer/tokenizer.h"

namespace tessera {

struct GenerationFlags {
    std::string model_path;
    GenerateOptions options;
    int threads = default_threads();
    int64_t n_ctx = 4096;

    void add_to(CLI::App& app);
};

struct LoadedModel {
    std::unique_ptr<Model> model;
    std::unique_ptr<Tokenizer> tokenizer;
    ModelChatTemplate chat_template;

    // Errors are printed as one line prefixed with `command`.
    static std::unique_ptr<LoadedModel> load(const GenerationFlags& flags, const char* command);
    // Renders messages (a JSON array) through the model's template and tokenizes it.
    Expected<std::vector<int32_t>> chat_prompt(const std::string& messages_json) const;
};

// Streams generation to stdout; prints speed to stderr. Returns false on error.
bool generate_to_stdout(LoadedModel& loaded, const std::vector<int32_t>& prompt, const GenerateOptions& options,
                        ThreadPool& pool, const char* command, std::string* text_out = nullptr,
                        bool report_speed = true);

}  // namespace tessera
