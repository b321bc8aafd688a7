// libFuzzer target: arbitrary text as a model's output, parsed for tool calls
// in every family, and fed to the streaming hold-back check prefix by prefix.
// Whatever the text, parsing must not crash, and what it returns must hold
// together: a call has a name and an argument object; no calls, the text
// (Functionary v3.2: at most the text, its "all" headers dropped).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "template/tool_calls.h"
#include "template/tool_messages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    using tessera::ToolCallFamily;
    for (ToolCallFamily family : {ToolCallFamily::Generic, ToolCallFamily::Hermes, ToolCallFamily::Llama3,
                                  ToolCallFamily::Mistral, ToolCallFamily::DeepSeek, ToolCallFamily::FunctionaryV31,
                                  ToolCallFamily::FunctionaryV32}) {
        const tessera::ToolCallOutput out = tessera::parse_tool_calls(text, family);
        // Functionary v3.2 drops its "all" headers even without calls.
        const bool drops_headers = family == ToolCallFamily::FunctionaryV32;
        if (out.calls.empty() && (drops_headers ? out.content.size() > text.size() : out.content != text)) std::abort();
        for (const tessera::ToolCall& call : out.calls) {
            if (call.name.empty() || !tessera::parse_tool_json(call.arguments).is_object()) std::abort();
        }
        // Streamed prefix by prefix with each answer as the next `from`, the
        // start must be the one a look at the whole text gives.
        size_t from = 0;
        for (size_t n = 0; n <= text.size(); n += 1 + n / 4) {
            const size_t start = tessera::tool_call_start(text.substr(0, n), family, n == text.size(), from);
            if (start > n || start != tessera::tool_call_start(text.substr(0, n), family, n == text.size())) std::abort();
            from = start;
        }
    }
    return 0;
}
