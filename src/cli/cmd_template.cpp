// `tessera template (-m MODEL | --template FILE) [--messages FILE] [--tools FILE]
// [--no-generation-prompt]`: prints the rendered prompt byte for byte. The
// template and bos/eos strings come from the GGUF, or from the command line.
#include "cli/commands.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>

#include "cli/cli_util.h"
#include "gguf/gguf_file.h"
#include "template/model_chat_template.h"
#include "template/chat_render.h"

namespace tessera {
namespace {

const char* const kDemoMessages =
    R"([{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "Hello!"}])";

Expected<ModelChatTemplate> load_from_model(const std::string& path) {
    auto file = GgufFile::open(path);
    if (!file) return file.status();
    auto loaded = chat_template_from_gguf(*file);
    if (loaded && !loaded->warning.empty()) {
        std::fprintf(stderr, "tessera template: warning: %s\n", loaded->warning.c_str());
    }
    return loaded;
}

}  // namespace

int cmd_template(int argc, char** argv) {
    CLI::App app{"Render a chat template and print the prompt exactly", "template"};
    std::string model_path, template_path, messages_path, tools_path, bos, eos;
    bool no_generation_prompt = false;
    int64_t now = 0;
    auto* model_opt = app.add_option("-m,--model", model_path, "GGUF model whose tokenizer.chat_template to use");
    auto* template_opt = app.add_option("--template", template_path, "Jinja chat template file");
    model_opt->excludes(template_opt);
    auto* bos_opt = app.add_option("--bos", bos, "bos_token string (default: the model's)");
    auto* eos_opt = app.add_option("--eos", eos, "eos_token string (default: the model's)");
    app.add_option("--messages", messages_path, "JSON file with the messages ('-' for stdin; default: a demo)");
    app.add_option("--tools", tools_path, "JSON file with the tool definitions");
    app.add_flag("--no-generation-prompt", no_generation_prompt, "do not open an assistant turn at the end");
    auto* now_opt = app.add_option("--now", now, "seconds since the epoch that strftime_now() sees");
    if (auto code = parse_args(app, argc, argv)) return *code;
    if (model_path.empty() == template_path.empty()) {
        std::fprintf(stderr, "tessera template: give exactly one of -m MODEL or --template FILE\n");
        return 2;
    }

    std::string source;
    if (!model_path.empty()) {
        auto loaded = load_from_model(model_path);
        if (!loaded) {
            std::fprintf(stderr, "tessera template: %s\n", loaded.error().c_str());
            return 1;
        }
        source = loaded->source;
        if (!*bos_opt) bos = loaded->bos;
        if (!*eos_opt) eos = loaded->eos;
    } else {
        auto text = read_text(template_path);
        if (!text) {
            std::fprintf(stderr, "tessera template: %s\n", text.error().c_str());
            return 1;
        }
        source = *text;
    }

    std::string messages_text = kDemoMessages;
    if (!messages_path.empty()) {
        auto text = read_text(messages_path);
        if (!text) {
            std::fprintf(stderr, "tessera template: %s\n", text.error().c_str());
            return 1;
        }
        messages_text = std::move(*text);
    }
    ChatRenderInput in;
    auto messages = parse_chat_json(messages_text, "messages");
    if (!messages) {
        std::fprintf(stderr, "tessera template: %s\n", messages.error().c_str());
        return 1;
    }
    in.messages = std::move(*messages);
    if (!tools_path.empty()) {
        auto text = read_text(tools_path);
        auto tools = text ? parse_chat_json(*text, "tools") : Expected<nlohmann::ordered_json>(text.status());
        if (!tools) {
            std::fprintf(stderr, "tessera template: %s\n", tools.error().c_str());
            return 1;
        }
        in.tools = std::move(*tools);
    }
    in.add_generation_prompt = !no_generation_prompt;
    if (*now_opt) in.now_epoch_seconds = now;

    auto rendered = ChatTemplate(source, bos, eos).render(std::move(in));
    if (!rendered) {
        std::fprintf(stderr, "tessera template: %s\n", rendered.error().c_str());
        return 1;
    }
    std::fwrite(rendered->data(), 1, rendered->size(), stdout);
    return 0;
}

}  // namespace tessera
