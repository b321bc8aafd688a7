// Tool-call families and the parsing of generated text (see tool_calls.h).
#include "template/tool_calls.h"

#include <optional>

#include "template/tool_messages.h"

namespace tessera {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kHermesOpen = "<tool_call>";
constexpr std::string_view kHermesClose = "</tool_call>";
constexpr std::string_view kMistralMarker = "[TOOL_CALLS]";
constexpr std::string_view kPythonTag = "<|python_tag|>";
constexpr std::string_view kDeepSeekCalls = "<｜tool▁calls▁begin｜>";
constexpr std::string_view kDeepSeekCallsEnd = "<｜tool▁calls▁end｜>";
constexpr std::string_view kDeepSeekCall = "<｜tool▁call▁begin｜>";
constexpr std::string_view kDeepSeekSep = "<｜tool▁sep｜>";
constexpr std::string_view kDeepSeekCallEnd = "<｜tool▁call▁end｜>";
constexpr std::string_view kFunctionOpen = "<function=";  // Functionary v3.1
constexpr std::string_view kFunctionClose = "</function>";
constexpr std::string_view kRecipient = ">>>";            // Functionary v3.2
constexpr std::string_view kRecipientAll = "all";

bool is_blank(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
    return s;
}

size_t first_non_blank(std::string_view s) {
    size_t i = 0;
    while (i < s.size() && is_blank(s[i])) ++i;
    return i;
}

// One past the JSON object or array that opens at s[start], or npos when it
// does not close. Brackets inside strings are skipped.
size_t json_value_end(std::string_view s, size_t start) {
    int depth = 0;
    bool in_string = false;
    for (size_t i = start; i < s.size(); ++i) {
        const char c = s[i];
        if (in_string) {
            if (c == '\\') {
                ++i;
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            ++depth;
        } else if ((c == '}' || c == ']') && --depth == 0) {
            return i + 1;
        }
    }
    return std::string_view::npos;
}

// {"name": .., "arguments" (Llama 3: "parameters"): {..} or a string
// holding an object} as a call; no arguments: {}.
std::optional<ToolCall> call_from(const Json& obj) {
    if (!obj.is_object()) return std::nullopt;
    auto name = obj.find("name");
    if (name == obj.end() || !name->is_string() || name->get_ref<const std::string&>().empty()) return std::nullopt;
    Json args = Json::object();
    auto it = obj.find("arguments");
    if (it == obj.end()) it = obj.find("parameters");
    if (it != obj.end()) {
        args = it->is_string() ? parse_tool_json(it->get_ref<const std::string&>()) : *it;
    }
    if (!args.is_object()) return std::nullopt;
    return ToolCall{name->get<std::string>(), args.dump(-1, ' ', false, Json::error_handler_t::replace)};
}

std::optional<ToolCall> parse_call(std::string_view text) {
    return call_from(parse_tool_json(trim(text)));
}

// A JSON array of calls, as Mistral and the generic {"tool_calls": [..]} write them.
bool append_calls(const Json& list, std::vector<ToolCall>& out) {
    if (!list.is_array() || list.empty()) return false;
    for (const Json& item : list) {
        auto call = call_from(item);
        if (!call) return false;
        out.push_back(std::move(*call));
    }
    return true;
}

ToolCallOutput no_calls(std::string_view text) { return {std::string(text), {}}; }

ToolCallOutput with_content(std::string content, std::vector<ToolCall> calls) {
    return {std::string(trim(content)), std::move(calls)};
}

// Calls that each open with the tag `open` anywhere in the text, the prose
// around them kept as content. parse_at(body) reads the call whose body
// starts at text offset `body` and sets `end` one past it (its close tag
// included); nullopt when malformed, and then the whole text is prose.
template <class ParseAt>
ToolCallOutput parse_tagged_calls(std::string_view text, std::string_view open_tag, ParseAt parse_at) {
    std::string content;
    std::vector<ToolCall> calls;
    size_t pos = 0;
    for (size_t open; (open = text.find(open_tag, pos)) != std::string_view::npos;) {
        content += text.substr(pos, open - pos);
        size_t end = 0;
        auto call = parse_at(open + open_tag.size(), end);
        if (!call) return no_calls(text);
        calls.push_back(std::move(*call));
        pos = end;
    }
    if (calls.empty()) return no_calls(text);
    content += text.substr(pos);
    return with_content(std::move(content), std::move(calls));
}

// Hermes / Qwen: <tool_call>{..}</tool_call>, the close may be cut off by
// max_tokens or a stop.
ToolCallOutput parse_hermes(std::string_view text) {
    return parse_tagged_calls(text, kHermesOpen, [text](size_t body, size_t& end) {
        const size_t close = text.find(kHermesClose, body);
        end = close == std::string_view::npos ? text.size() : close + kHermesClose.size();
        return parse_call(text.substr(body, close == std::string_view::npos ? std::string_view::npos : close - body));
    });
}

ToolCallOutput parse_mistral(std::string_view text) {
    const size_t marker = text.find(kMistralMarker);
    if (marker == std::string_view::npos) return no_calls(text);
    const size_t start = marker + kMistralMarker.size() + first_non_blank(text.substr(marker + kMistralMarker.size()));
    if (start >= text.size() || text[start] != '[') return no_calls(text);
    const size_t end = json_value_end(text, start);
    if (end == std::string_view::npos) return no_calls(text);
    std::vector<ToolCall> calls;
    if (!append_calls(parse_tool_json(text.substr(start, end - start)), calls)) return no_calls(text);
    return with_content(std::string(text.substr(0, marker)) + std::string(text.substr(end)), std::move(calls));
}

// One DeepSeek call body: TYPE<｜tool▁sep｜>NAME\n```json\nARGS\n```
std::optional<ToolCall> parse_deepseek_call(std::string_view body) {
    const size_t sep = body.find(kDeepSeekSep);
    if (sep == std::string_view::npos) return std::nullopt;
    std::string_view rest = body.substr(sep + kDeepSeekSep.size());
    const size_t newline = rest.find('\n');
    if (newline == std::string_view::npos) return std::nullopt;
    const std::string_view name = trim(rest.substr(0, newline));
    std::string_view args = trim(rest.substr(newline + 1));
    const std::string_view open = "```json", close = "```";
    if (args.substr(0, open.size()) != open || args.size() < open.size() + close.size() ||
        args.substr(args.size() - close.size()) != close) {
        return std::nullopt;
    }
    args = args.substr(open.size(), args.size() - open.size() - close.size());
    if (name.empty()) return std::nullopt;
    return call_from(Json{{"name", std::string(name)}, {"arguments", parse_tool_json(trim(args))}});
}

ToolCallOutput parse_deepseek(std::string_view text) {
    const size_t begin = text.find(kDeepSeekCalls);
    if (begin == std::string_view::npos) return no_calls(text);
    const size_t end = text.find(kDeepSeekCallsEnd, begin);
    const size_t body_end = end == std::string_view::npos ? text.size() : end;
    std::vector<ToolCall> calls;
    size_t pos = begin + kDeepSeekCalls.size();
    for (size_t open; (open = text.find(kDeepSeekCall, pos)) < body_end;) {
        const size_t start = open + kDeepSeekCall.size();
        const size_t close = text.find(kDeepSeekCallEnd, start);
        if (close == std::string_view::npos || close > body_end) return no_calls(text);
        auto call = parse_deepseek_call(text.substr(start, close - start));
        if (!call) return no_calls(text);
        calls.push_back(std::move(*call));
        pos = close + kDeepSeekCallEnd.size();
    }
    if (calls.empty()) return no_calls(text);
    const size_t after = end == std::string_view::npos ? text.size() : end + kDeepSeekCallsEnd.size();
    return with_content(std::string(text.substr(0, begin)) + std::string(text.substr(after)), std::move(calls));
}

// The call NAME with the JSON object that opens `text` (after blanks) as its
// arguments; `end`: one past the object.
std::optional<ToolCall> named_call(std::string_view name, std::string_view text, size_t& end) {
    const size_t start = first_non_blank(text);
    if (name.empty() || start >= text.size() || text[start] != '{') return std::nullopt;
    end = json_value_end(text, start);
    if (end == std::string_view::npos) return std::nullopt;
    return call_from(Json{{"name", std::string(name)}, {"arguments", parse_tool_json(text.substr(start, end - start))}});
}

// Functionary v3.1: <function=NAME>{..}</function>, the close optional (a
// model may drop it, max_tokens may cut it).
ToolCallOutput parse_functionary_v31(std::string_view text) {
    return parse_tagged_calls(text, kFunctionOpen, [text](size_t name_start, size_t& end) -> std::optional<ToolCall> {
        const size_t name_end = text.find('>', name_start);
        if (name_end == std::string_view::npos) return std::nullopt;
        size_t object_end = 0;
        auto call = named_call(text.substr(name_start, name_end - name_start), text.substr(name_end + 1), object_end);
        end = name_end + 1 + object_end;
        if (text.substr(end, kFunctionClose.size()) == kFunctionClose) end += kFunctionClose.size();
        return call;
    });
}

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// Length of the recipient line ("NAME\n") that opens `section`, 0 when it
// does not open with one.
size_t recipient_line(std::string_view section) {
    size_t i = 0;
    while (i < section.size() && is_name_char(section[i])) ++i;
    return i > 0 && i < section.size() && section[i] == '\n' ? i + 1 : 0;
}

// Functionary v3.2: sections split at ">>>". The first, when the text does
// not open with ">>>", had its marker in the prompt; if it has no recipient
// line (or is not a call) it is prose. Later sections must be well formed.
ToolCallOutput parse_functionary_v32(std::string_view text) {
    std::string content;
    std::vector<ToolCall> calls;
    const bool opened = text.substr(0, kRecipient.size()) == kRecipient;
    size_t pos = opened ? kRecipient.size() : 0;
    for (bool first = true; pos <= text.size(); first = false) {
        size_t next = text.find(kRecipient, pos);
        if (next == std::string_view::npos) next = text.size();
        const std::string_view section = text.substr(pos, next - pos);
        const size_t header = recipient_line(section);
        const std::string_view recipient = section.substr(0, header ? header - 1 : 0);
        size_t end = 0;
        if (recipient == kRecipientAll) {
            content += section.substr(header);
        } else if (auto call = header ? named_call(recipient, section.substr(header), end) : std::nullopt;
                   call && trim(section.substr(header + end)).empty()) {
            calls.push_back(std::move(*call));
        } else if (first && !opened) {
            content += section;
        } else if (!trim(section).empty()) {  // an empty section (cut after ">>>") is skipped
            return no_calls(text);
        }
        pos = next + kRecipient.size();
    }
    if (calls.empty()) return {content, {}};
    return with_content(std::move(content), std::move(calls));
}

// Harmony: the body of each message that carries a header. Text before the
// first header (a reply that ignored the format) is content.
ToolCallOutput parse_harmony(std::string_view text) {
    constexpr std::string_view kMessage = "<|message|>", kChannel = "<|channel|>", kTo = " to=";
    if (text.find(kMessage) == std::string_view::npos) return no_calls(text);
    std::string content, reasoning;
    std::vector<ToolCall> calls;
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t body = text.find(kMessage, pos);
        if (body == std::string_view::npos) break;
        const std::string_view header = text.substr(pos, body - pos);
        if (pos == 0 && header.find(kChannel) == std::string_view::npos) content += header;  // no frame yet
        size_t end = text.size();
        for (std::string_view close : {"<|end|>", "<|start|>", "<|call|>", "<|return|>"}) {
            end = std::min(end, text.find(close, body + kMessage.size()));
        }
        const std::string_view message = text.substr(body + kMessage.size(), end - body - kMessage.size());
        const size_t channel = header.find(kChannel);
        std::string_view channel_name =
            channel == std::string_view::npos ? std::string_view() : header.substr(channel + kChannel.size());
        channel_name = channel_name.substr(0, std::min(channel_name.find(' '), channel_name.find("<|")));
        const size_t to = header.find(kTo);
        std::string_view recipient = to == std::string_view::npos ? std::string_view() : header.substr(to + kTo.size());
        size_t name_len = 0;
        while (name_len < recipient.size() && (is_name_char(recipient[name_len]) || recipient[name_len] == '.')) ++name_len;
        recipient = recipient.substr(0, name_len);
        if (recipient.substr(0, 10) == "functions.") {
            size_t object_end = 0;
            if (auto call = named_call(recipient.substr(10), message, object_end)) calls.push_back(std::move(*call));
        } else if (channel_name == "final" || (channel_name == "commentary" && recipient.empty())) {
            content += message;
        } else if (channel_name == "analysis") {
            reasoning += message;
        }
        // Past the message and its closing token (a rendered <|start|> opens the next header).
        pos = end;
        for (std::string_view close : {"<|end|>", "<|call|>", "<|return|>"}) {
            if (text.substr(pos, close.size()) == close) pos += close.size();
        }
    }
    ToolCallOutput out = calls.empty() ? ToolCallOutput{content, {}} : with_content(std::move(content), std::move(calls));
    out.reasoning = std::move(reasoning);
    return out;
}

// The whole message is calls: JSON objects separated by ';'.
ToolCallOutput parse_llama3(std::string_view text) {
    std::string_view rest = trim(text);
    if (rest.substr(0, kPythonTag.size()) == kPythonTag) rest = trim(rest.substr(kPythonTag.size()));
    std::vector<ToolCall> calls;
    while (!rest.empty()) {
        if (rest.front() != '{') return no_calls(text);
        const size_t end = json_value_end(rest, 0);
        if (end == std::string_view::npos) return no_calls(text);
        auto call = parse_call(rest.substr(0, end));
        if (!call) return no_calls(text);
        calls.push_back(std::move(*call));
        rest = trim(rest.substr(end));
        if (!rest.empty() && rest.front() == ';') rest = trim(rest.substr(1));
    }
    if (calls.empty()) return no_calls(text);
    return {"", std::move(calls)};
}

// The first JSON object in the text, if it is {"tool_calls": [..]} or one
// call; the text around it is content. Small models often add a sentence
// or a ```json fence, which are dropped from the content with the call.
ToolCallOutput parse_generic(std::string_view text) {
    const size_t start = text.find('{');
    if (start == std::string_view::npos) return no_calls(text);
    const size_t end = json_value_end(text, start);
    if (end == std::string_view::npos) return no_calls(text);
    const Json obj = parse_tool_json(text.substr(start, end - start));
    std::vector<ToolCall> calls;
    if (obj.is_object() && obj.contains("tool_calls")) {
        if (!append_calls(obj["tool_calls"], calls)) return no_calls(text);
    } else if (auto call = call_from(obj)) {
        calls.push_back(std::move(*call));
    } else {
        return no_calls(text);
    }
    std::string_view before = text.substr(0, start);
    std::string_view after = text.substr(end);
    const std::string_view fence = "```json";
    if (size_t f = before.rfind(fence); f != std::string_view::npos && trim(before.substr(f + fence.size())).empty()) {
        before = before.substr(0, f);
        if (trim(after).substr(0, 3) == "```") after = trim(after).substr(3);
    }
    return with_content(std::string(before) + std::string(after), std::move(calls));
}

// Where `marker` starts in `text`, or where a suffix of `text` that may grow
// into it starts; text.size() when neither.
size_t marker_start(std::string_view text, std::string_view marker, bool complete) {
    if (size_t at = text.find(marker); at != std::string_view::npos) return at;
    if (complete) return text.size();
    for (size_t n = std::min(marker.size() - 1, text.size()); n > 0; --n) {
        if (text.substr(text.size() - n) == marker.substr(0, n)) return text.size() - n;
    }
    return text.size();
}

// Llama 3: calls are the whole message, so they start at its first
// non-blank character, a '{' or <|python_tag|>. While only blanks (or part
// of the tag) came, wait.
size_t llama3_start(std::string_view text, bool complete) {
    const std::string_view rest = text.substr(first_non_blank(text));
    if (rest.empty()) return complete ? text.size() : 0;
    if (rest.front() == '{' || rest.substr(0, kPythonTag.size()) == kPythonTag) return 0;
    const bool may_be_tag = !complete && rest.size() < kPythonTag.size() && kPythonTag.substr(0, rest.size()) == rest;
    return may_be_tag ? 0 : text.size();
}

// Functionary v3.2: a message that opens with a recipient line (or what may
// become one) is held from its start; otherwise calls start at ">>>".
size_t functionary_v32_start(std::string_view text, bool complete, size_t from) {
    size_t i = 0;
    while (i < text.size() && is_name_char(text[i])) ++i;
    if (i > 0 && ((i < text.size() && text[i] == '\n') || (i == text.size() && !complete))) return 0;
    from = std::min(from, text.size());
    return from + marker_start(text.substr(from), kRecipient, complete);
}

}  // namespace

ToolCallFamily tool_call_family(std::string_view source) {
    if (source.find("<|channel|>") != std::string_view::npos) return ToolCallFamily::Harmony;
    if (source.find(kDeepSeekCalls) != std::string_view::npos) return ToolCallFamily::DeepSeek;
    // Before Llama 3: Functionary v3.1's template also knows <|python_tag|>.
    if (source.find(kFunctionOpen) != std::string_view::npos) return ToolCallFamily::FunctionaryV31;
    if (source.find(">>>all") != std::string_view::npos) return ToolCallFamily::FunctionaryV32;
    if (source.find(kHermesOpen) != std::string_view::npos) return ToolCallFamily::Hermes;
    if (source.find(kMistralMarker) != std::string_view::npos) return ToolCallFamily::Mistral;
    if (source.find(kPythonTag) != std::string_view::npos || source.find("ipython") != std::string_view::npos) {
        return ToolCallFamily::Llama3;
    }
    return ToolCallFamily::Generic;
}

const char* tool_call_family_name(ToolCallFamily family) {
    switch (family) {
        case ToolCallFamily::Hermes: return "hermes";
        case ToolCallFamily::Llama3: return "llama3";
        case ToolCallFamily::Mistral: return "mistral";
        case ToolCallFamily::DeepSeek: return "deepseek";
        case ToolCallFamily::FunctionaryV31: return "functionary-v3.1";
        case ToolCallFamily::FunctionaryV32: return "functionary-v3.2";
        case ToolCallFamily::Harmony: return "harmony";
        case ToolCallFamily::Generic: break;
    }
    return "generic";
}

std::vector<std::string_view> tool_call_markers(ToolCallFamily family) {
    switch (family) {
        case ToolCallFamily::Hermes: return {kHermesOpen, kHermesClose};
        case ToolCallFamily::Llama3: return {kPythonTag};
        case ToolCallFamily::Mistral: return {kMistralMarker};
        case ToolCallFamily::DeepSeek:
            return {kDeepSeekCalls, kDeepSeekCallsEnd, kDeepSeekCall, kDeepSeekSep, kDeepSeekCallEnd};
        case ToolCallFamily::FunctionaryV31:
        case ToolCallFamily::FunctionaryV32:
        case ToolCallFamily::Harmony:  // its frame tokens are user-defined, rendered anyway (tokenizer/vocab.h)
        case ToolCallFamily::Generic: break;
    }
    return {};
}

ToolCallOutput parse_tool_calls(std::string_view text, ToolCallFamily family) {
    switch (family) {
        case ToolCallFamily::Hermes: return parse_hermes(text);
        case ToolCallFamily::Llama3: return parse_llama3(text);
        case ToolCallFamily::Mistral: return parse_mistral(text);
        case ToolCallFamily::DeepSeek: return parse_deepseek(text);
        case ToolCallFamily::FunctionaryV31: return parse_functionary_v31(text);
        case ToolCallFamily::FunctionaryV32: return parse_functionary_v32(text);
        case ToolCallFamily::Harmony: return parse_harmony(text);
        case ToolCallFamily::Generic: break;
    }
    return parse_generic(text);
}

size_t tool_call_start(std::string_view text, ToolCallFamily family, bool complete, size_t from) {
    if (family == ToolCallFamily::Llama3) return llama3_start(text, complete);  // decided at the start
    if (family == ToolCallFamily::FunctionaryV32) return functionary_v32_start(text, complete, from);
    from = std::min(from, text.size());
    if (family == ToolCallFamily::Harmony) return from;
    const std::string_view rest = text.substr(from);
    switch (family) {
        case ToolCallFamily::Hermes: return from + marker_start(rest, kHermesOpen, complete);
        case ToolCallFamily::Mistral: return from + marker_start(rest, kMistralMarker, complete);
        case ToolCallFamily::DeepSeek: return from + marker_start(rest, kDeepSeekCalls, complete);
        case ToolCallFamily::FunctionaryV31: return from + marker_start(rest, kFunctionOpen, complete);
        case ToolCallFamily::FunctionaryV32:
        case ToolCallFamily::Llama3:
        case ToolCallFamily::Harmony:
        case ToolCallFamily::Generic: break;
    }
    // The generic parse takes the first object anywhere, so hold from the
    // first '{' (or a fence that may precede one).
    return from + std::min(std::min(rest.find('{'), rest.size()), marker_start(rest, "```", complete));
}

Json with_generic_tool_prompt(const Json& messages, const Json& tools) {
    std::string prompt = "You can call these functions (each with a JSON Schema of its arguments):\n";
    for (const Json& tool : tools) {
        if (tool.is_object() && tool.contains("function")) {
            prompt += tool["function"].dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
        }
    }
    prompt += "\nTo call functions, reply with only this JSON object and nothing else:\n"
              "{\"tool_calls\": [{\"name\": \"<function name>\", \"arguments\": {<arguments>}}]}\n"
              "A function's result comes back as {\"tool_response\": ...}. Otherwise, answer normally.";
    Json out = messages;
    const bool has_system = out.is_array() && !out.empty() && out[0].is_object() && out[0].contains("role") && out[0]["role"] == "system" &&
                            out[0].contains("content") && out[0]["content"].is_string();
    if (has_system) {
        out[0]["content"] = out[0]["content"].get<std::string>() + "\n\n" + prompt;
    } else if (out.is_array()) {
        out.insert(out.begin(), Json{{"role", "system"}, {"content", prompt}});
    }
    return out;
}

}  // namespace tessera
