#include "template/builtin_templates.h"

#include <array>

#include "template/chat_render.h"

namespace tessera {
namespace {

// Llama 3's header/eot framing; the generation prompt opens an assistant header.
const char* const kLlama3 =
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + "
    "'<|eot_id|>' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}";

std::string llama3_template() { return kLlama3; }

struct Builtin {
    const char* name;
    std::string (*source)();
};
constexpr std::array<Builtin, 2> kBuiltins = {{{"chatml", chatml_template}, {"llama3", llama3_template}}};

}  // namespace

std::optional<std::string> builtin_chat_template(const std::string& name) {
    for (const Builtin& b : kBuiltins) {
        if (name == b.name) return b.source();
    }
    return std::nullopt;
}

std::string builtin_chat_template_names() {
    std::string out;
    for (const Builtin& b : kBuiltins) out += (out.empty() ? "" : ", ") + std::string(b.name);
    return out;
}

}  // namespace tessera
