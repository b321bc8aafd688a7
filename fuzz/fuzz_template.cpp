// libFuzzer target: arbitrary text as a chat template (parse, then render with
// a small fixed conversation and tight limits), or arbitrary text as the
// messages JSON rendered through a real template and the ChatML fallback.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "template/chat_render.h"
#include "template/template.h"

namespace {

tessera::TemplateLimits tight_limits() {
    tessera::TemplateLimits l;
    l.max_loop_iterations = 2000;
    l.max_output_bytes = 64 << 10;
    l.max_steps = 50000;
    return l;
}

const nlohmann::ordered_json& variables() {
    static const nlohmann::ordered_json v = nlohmann::ordered_json::parse(R"({
        "messages": [{"role": "system", "content": "Be brief."},
                     {"role": "user", "content": "Hi <b> & 'you'"},
                     {"role": "assistant", "content": "Hello", "tool_calls": [
                        {"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]},
                     {"role": "tool", "content": "42", "tool_call_id": "c1"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
        "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>", "n": 3, "x": [1, [2, 3], null]})");
    return v;
}

// A real template with loops, macros-free logic and tool handling (Llama-3 style).
const char* kLoopTemplate =
    "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'system' %}<<SYS>>{{ m['content'] | trim }}"
    "{% elif m.content is string %}[{{ m.role | upper }}] {{ m.content }}{% else %}{{ m.content | tojson }}"
    "{% endif %}{% if not loop.last %}\n{% endif %}{% endfor %}{% if add_generation_prompt %}[ASSISTANT]{% endif %}";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    tessera::RenderOptions opts;
    opts.limits = tight_limits();
    opts.now_epoch_seconds = 1700000000;
    if (data[0] & 1) {
        auto messages = tessera::parse_chat_json(text, "messages");
        if (!messages) return 0;
        tessera::ChatRenderInput in;
        in.messages = std::move(*messages);
        if (data[0] & 2) {
            in.tools = *tessera::parse_chat_json(R"([{"type": "function", "function": {"name": "g"}}])", "tools");
        }
        in.add_generation_prompt = (data[0] & 4) != 0;
        in.now_epoch_seconds = opts.now_epoch_seconds;
        const tessera::ChatTemplate chat((data[0] & 8) ? tessera::chatml_template() : std::string(kLoopTemplate), "<s>",
                                         "</s>", opts.limits);
        (void)chat.render(std::move(in));
        return 0;
    }
    auto tmpl = tessera::Template::parse(text, opts.limits);
    if (!tmpl) return 0;
    auto out = tmpl->render(variables(), opts);
    if (out && out->size() > opts.limits.max_output_bytes) std::abort();  // the cap must hold
    return 0;
}
