// `tessera chat`: an interactive multi-turn chat on stdin/stdout using the
// model's chat template. `/reset` clears the conversation, `/exit` (or end of
// input) quits. Each turn re-renders the whole conversation; the engine's
// prefix cache holds the earlier turns, so only the new turn is prefilled.
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
    bool stats = false;
    flags.request.max_tokens = 512;
    flags.add_to(app);
    app.add_option("--system", system, "system message");
    app.add_flag("--stats", stats, "after each answer, print its prompt, cached and generated token counts to stderr");
    if (auto code = parse_args(app, argc, argv)) return *code;

    auto loaded = LoadedModel::load(flags, "chat");
    if (!loaded) return 1;
    if (!loaded->chat_template.warning.empty()) {
        std::fprintf(stderr, "tessera chat: warning: %s\n", loaded->chat_template.warning.c_str());
    }
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
        GenerationRequest request = flags.request;
        request.prompt = std::move(*prompt);
        std::string answer;
        auto turn = generate_to_stdout(*loaded, std::move(request), "chat", &answer, false);
        if (!turn) {
            messages.erase(messages.size() - 1);
            continue;
        }
        if (stats) {
            std::fprintf(stderr, "stats: prompt %lld tokens, %lld cached, %lld generated\n",
                         static_cast<long long>(turn->prompt_tokens), static_cast<long long>(turn->cached_tokens),
                         static_cast<long long>(turn->completion_tokens));
        }
        messages.push_back({{"role", "assistant"}, {"content", answer}});
    }
    std::printf("\n");
    return 0;
}

}  // namespace tessera
