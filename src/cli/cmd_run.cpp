// `tessera run`: load a model, tokenize a prompt (optionally wrapped in the
// model's chat template), stream generated text to stdout, and report prompt
// and generation speed on stderr.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/chat_session.h"
#include "cli/commands.h"

namespace tessera {

int cmd_run(int argc, char** argv) {
    CLI::App app{"Generate text from a prompt", "run"};
    GenerationFlags flags;
    std::string prompt, system;
    bool chat = false;
    bool parse_special = true;
    flags.add_to(app);
    app.add_option("-p,--prompt", prompt, "prompt text")->required();
    app.add_flag("--chat", chat, "wrap the prompt in the model's chat template as a user message");
    app.add_option("--system", system, "system message (with --chat)");
    app.add_flag("!--no-parse-special", parse_special, "treat special-token text in the prompt as plain text");
    if (auto code = parse_args(app, argc, argv)) return *code;

    auto loaded = LoadedModel::load(flags, "run");
    if (!loaded) return 1;
    std::vector<int32_t>& tokens = flags.request.prompt;
    if (chat) {
        if (!loaded->chat_template.warning.empty()) {
            std::fprintf(stderr, "tessera run: warning: %s\n", loaded->chat_template.warning.c_str());
        }
        nlohmann::json messages = nlohmann::json::array();
        if (!system.empty()) messages.push_back({{"role", "system"}, {"content", system}});
        messages.push_back({{"role", "user"}, {"content", prompt}});
        auto rendered = loaded->chat_prompt(messages.dump());
        if (!rendered) {
            std::fprintf(stderr, "tessera run: chat template: %s\n", rendered.error().c_str());
            return 1;
        }
        tokens = std::move(*rendered);
    } else {
        tokens = loaded->tokenizer->encode(prompt, {.add_special = true, .parse_special = parse_special});
    }
    return generate_to_stdout(*loaded, std::move(flags.request), "run") ? 0 : 1;
}

}  // namespace tessera
