// `tessera chat`: an interactive multi-turn chat on stdin/stdout using the
// model's chat template. `/reset` clears the conversation, `/exit` (or end of
// input) quits. Each turn re-renders and re-prefills the whole conversation;
// reusing the cached prefix is the serving engine's job.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/chat_session.h"
#include "cli/commands.h"

namespace tessera {

int cmd_chat(int argc, char** argv) {
    CLI::App app{"Interactive multi-turn chat", "chat"};
    GenerationFlags flags;
    std::string system;
    flags.options.max_tokens = 512;
    flags.add_to(app);
    app.add_option("--system", system, "system message");
    if (auto code = parse_args(app, argc, argv)) return *code;

    auto loaded = LoadedModel::load(flags, "chat");
    if (!loaded) return 1;
    if (!loaded->chat_template.warning.empty()) {
        std::fprintf(stderr, "tessera chat: warning: %s\n", loaded->chat_template.warning.c_str());
    }
    flags.options.n_ctx = std::min<int64_t>(flags.n_ctx, loaded->model->config().n_ctx_train);
    ThreadPool pool(flags.threads);
    auto fresh = [&] {
        nlohmann::json m = nlohmann::json::array();
        if (!system.empty()) m.push_back({{"role", "system"}, {"content", system}});
        return m;
    };
    nlohmann::json messages = fresh();
    std::fprintf(stderr, "tessera chat: type a message; /reset starts over, /exit quits\n");
    std::string line;
    while (true) {
        std::printf("> ");
        std::fflush(stdout);
        if (!std::getline(std::cin, line) || line == "/exit") break;
        if (line == "/reset") {
            messages = fresh();
            std::fprintf(stderr, "(conversation cleared)\n");
            continue;
        }
        if (line.empty()) continue;
        messages.push_back({{"role", "user"}, {"content", line}});
        auto prompt = loaded->chat_prompt(messages.dump());
        if (!prompt) {
            std::fprintf(stderr, "tessera chat: chat template: %s\n", prompt.error().c_str());
            messages.erase(messages.size() - 1);
            continue;
        }
        std::string answer;
        if (!generate_to_stdout(*loaded, *prompt, flags.options, pool, "chat", &answer, false)) {
            messages.erase(messages.size() - 1);
            continue;
        }
        messages.push_back({{"role", "assistant"}, {"content", answer}});
    }
    std::printf("\n");
    return 0;
}

}  // namespace tessera
