// Parsing and validation of OpenAI generation requests. Everything a client
// sends is checked here, so the engine only ever sees requests it can run.
#include "server/openai_request.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <limits>
#include <memory>
#include <utility>

#include "server/constraint_request.h"
#include "server/field_reader.h"
#include "server/tool_grammar.h"

namespace tessera {
namespace {

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

void read_stop(FieldReader& r, const RequestLimits& limits, std::vector<std::string>& out) {
    const Json* v = r.ok() ? r.find("stop") : nullptr;
    if (!v) return;
    std::vector<std::string> stops;
    if (v->is_string()) {
        stops.push_back(v->get<std::string>());
    } else if (v->is_array()) {
        for (const Json& s : *v) {
            if (!s.is_string()) return r.fail(bad_request("stop", "'stop' must be a string or a list of strings"));
            stops.push_back(s.get<std::string>());
        }
    } else {
        return r.fail(bad_request("stop", "'stop' must be a string or a list of strings"));
    }
    if (stops.size() > limits.max_stop) {
        return r.fail(bad_request("stop", "at most " + std::to_string(limits.max_stop) + " stop strings are allowed"));
    }
    for (std::string& s : stops) {
        if (s.size() > limits.max_stop_bytes) {
            return r.fail(bad_request("stop", "each stop string may be at most " +
                                                  std::to_string(limits.max_stop_bytes) + " bytes"));
        }
        if (!s.empty()) out.push_back(std::move(s));  // an empty stop string would match before any text
    }
}

void read_logit_bias(FieldReader& r, const RequestLimits& limits, int32_t n_vocab,
                     std::vector<std::pair<int32_t, float>>& out) {
    const Json* v = r.ok() ? r.find("logit_bias") : nullptr;
    if (!v) return;
    if (!v->is_object()) return r.fail(bad_request("logit_bias", "'logit_bias' must be an object of token id -> bias"));
    if (v->size() > limits.max_logit_bias) {
        return r.fail(bad_request("logit_bias", "at most " + std::to_string(limits.max_logit_bias) +
                                                    " logit_bias entries are allowed"));
    }
    for (const auto& [key, bias] : v->items()) {
        int64_t token = -1;
        const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), token);
        if (ec != std::errc() || end != key.data() + key.size() || token < 0 || token >= n_vocab) {
            return r.fail(bad_request("logit_bias", "logit_bias key '" + key + "' is not a token id in [0, " +
                                                        std::to_string(n_vocab) + ")"));
        }
        if (!bias.is_number() || !(bias.get<double>() >= -100.0 && bias.get<double>() <= 100.0)) {
            return r.fail(bad_request("logit_bias", "logit_bias values must be numbers in [-100, 100]"));
        }
        out.emplace_back(static_cast<int32_t>(token), bias.get<float>());
    }
}

void read_stream(FieldReader& r, ParsedRequest& out) {
    r.boolean("stream", out.stream);
    const Json* opts = r.ok() ? r.find("stream_options") : nullptr;
    if (!opts) return;
    if (!opts->is_object()) return r.fail(bad_request("stream_options", "'stream_options' must be an object"));
    FieldReader sub(*opts);
    sub.boolean("include_usage", out.include_usage);
    if (!sub.ok()) r.fail(bad_request("stream_options", "'stream_options.include_usage' must be a boolean"));
}

// Fields chat and completions share: sampling, n, stop, stream, ignore_eos,
// token naming in logprobs, the draft length.
void read_common(FieldReader& r, const PromptContext& ctx, ParsedRequest& out) {
    const RequestLimits& limits = ctx.limits;
    SamplingParams& s = out.gen.sampling;
    // OpenAI's defaults (plain sampling at temperature 1), not llama.cpp's.
    s.temperature = 1.0f;
    s.top_p = 1.0f;
    s.top_k = 0;
    s.min_p = 0.0f;
    r.string("model", out.model);
    r.number("temperature", 0.0, 2.0, s.temperature);
    r.number("top_p", 0.0, 1.0, s.top_p);
    r.integer("top_k", -1, ctx.tokenizer->n_vocab(), s.top_k);
    if (s.top_k < 0) s.top_k = 0;  // -1 means "off" in vLLM's API
    r.number("min_p", 0.0, 1.0, s.min_p);
    r.number("presence_penalty", -2.0, 2.0, s.presence_penalty);
    r.number("frequency_penalty", -2.0, 2.0, s.frequency_penalty);
    r.number("repetition_penalty", 0.01, 10.0, s.repeat_penalty);
    int64_t seed = 0;
    out.seed_given = r.find("seed") != nullptr;
    r.integer("seed", kInt64Min, kInt64Max, seed);
    s.seed = static_cast<uint64_t>(seed);
    r.integer("n", 1, limits.max_n, out.gen.n);
    r.boolean("ignore_eos", out.gen.ignore_eos);
    r.boolean("return_tokens_as_token_ids", out.tokens_as_ids);
    // llama-server's flat key: this request's draft length cap (0: no
    // speculation); the server's --draft-max stays the ceiling.
    r.integer("speculative.n_max", 0, 64, out.gen.max_draft);
    read_stop(r, limits, out.gen.stop);
    read_logit_bias(r, limits, ctx.tokenizer->n_vocab(), s.logit_bias);
    read_stream(r, out);
}

// max_tokens / max_completion_tokens as sent (the latter wins); read before
// any work, since both early refusals below depend on it.
struct MaxTokens {
    std::optional<int64_t> value;  // absent: the rest of the context
    const char* param = "max_tokens";
};

MaxTokens read_max_tokens(FieldReader& r) {
    MaxTokens m;
    int64_t v = 0;
    if (r.integer("max_tokens", 1, kInt64Max, v) && r.find("max_tokens")) m.value = v;
    if (r.integer("max_completion_tokens", 1, kInt64Max, v) && r.find("max_completion_tokens")) {
        m.value = v;
        m.param = "max_completion_tokens";
    }
    return m;
}

// A non-streamed response is held whole until the last token, so its worst
// case is capped up front (ProtocolLimits::max_response_tokens).
std::optional<ApiError> check_response_size(const ParsedRequest& out, const MaxTokens& m, const PromptContext& ctx,
                                            const ProtocolLimits& limits, const char* logprobs_param) {
    if (out.stream) return std::nullopt;
    // Past the context the request fails the context check anyway; clamping
    // also keeps the product far from overflow (n and logprobs are capped).
    const int64_t max_tokens = std::min(m.value.value_or(ctx.max_context - 1), ctx.max_context);
    const int64_t per_token = out.gen.top_logprobs >= 0 ? int64_t{out.gen.top_logprobs} + 1 : 1;
    const int64_t worst = int64_t{out.gen.n} * max_tokens * per_token;
    if (worst <= limits.max_response_tokens) return std::nullopt;
    std::string fields = "n (" + std::to_string(out.gen.n) + ") x " + m.param + " (" +
                         (m.value ? "" : "default: up to ") + std::to_string(max_tokens) + ")";
    if (out.gen.top_logprobs >= 0) {
        fields += " x (" + std::string(logprobs_param) + " (" + std::to_string(out.gen.top_logprobs) + ") + 1)";
    }
    return bad_request(m.param,
                       "A non-streamed response could hold " + fields + " = " + std::to_string(worst) +
                           " tokens, over this server's limit of " + std::to_string(limits.max_response_tokens) +
                           "; lower n, " + m.param + " or " + logprobs_param + ", or set \"stream\": true",
                       "response_too_large");
}

// Refuses text that must encode to more tokens than the context holds before
// encoding it (megabytes take seconds): B bytes are at least
// ceil(B / longest token) tokens. Gives the 400 the exact check would.
std::optional<ApiError> check_prompt_bytes(size_t n_bytes, const PromptContext& ctx, const char* prompt_param,
                                           const MaxTokens& m) {
    const auto at_least = static_cast<int64_t>(std::min<size_t>(ctx.tokenizer->min_tokens_for_bytes(n_bytes),
                                                                static_cast<size_t>(kInt64Max)));
    const std::string why = "The prompt is at least " + std::to_string(at_least) + " tokens (" +
                            std::to_string(n_bytes) + " bytes)";
    if (at_least >= ctx.max_context) {
        return bad_request(prompt_param, why + "; this model's context is " + std::to_string(ctx.max_context) +
                                             " tokens", "context_length_exceeded");
    }
    if (m.value && *m.value > ctx.max_context - at_least) {
        return bad_request(m.param, why + " + " + m.param + " (" + std::to_string(*m.value) +
                                        ") exceeds the context of " + std::to_string(ctx.max_context) + " tokens",
                           "context_length_exceeded");
    }
    return std::nullopt;
}

// max_tokens against the context window, once the prompt length is known.
std::optional<ApiError> apply_max_tokens(const MaxTokens& m, const PromptContext& ctx, const char* prompt_param,
                                         ParsedRequest& out) {
    const auto n_prompt = static_cast<int64_t>(out.gen.prompt.size());
    if (n_prompt == 0) return bad_request(prompt_param, "The prompt is empty");
    if (n_prompt >= ctx.max_context) {
        return bad_request(prompt_param,
                           "The prompt is " + std::to_string(n_prompt) + " tokens; this model's context is " +
                               std::to_string(ctx.max_context) + " tokens",
                           "context_length_exceeded");
    }
    const int64_t max_tokens = m.value.value_or(ctx.max_context - n_prompt);  // default: the rest
    if (max_tokens > ctx.max_context - n_prompt) {
        return bad_request(m.param,
                           "prompt (" + std::to_string(n_prompt) + " tokens) + " + m.param + " (" +
                               std::to_string(max_tokens) + ") exceeds the context of " +
                               std::to_string(ctx.max_context) + " tokens",
                           "context_length_exceeded");
    }
    out.gen.max_tokens = static_cast<int32_t>(max_tokens);  // < max_context, which fits
    return std::nullopt;
}

std::optional<ApiError> finish(FieldReader& r, const PromptContext& ctx, const char* prompt_param,
                               const MaxTokens& m, ParsedRequest& out) {
    if (!r.ok()) return r.error();
    // Sampling parameters are range-checked field by field above; their
    // consistency (SamplingParams::validate) is checked once, by Engine::submit.
    return apply_max_tokens(m, ctx, prompt_param, out);
}

// tool_choice "required" or a named function: decoding follows the grammar
// that forces a call (server/tool_grammar), the request's one constraint.
// Through the model's grammar cache when there is one, keyed by the family
// and the body fields the grammar is made from: an agent sends the same
// tools every turn.
std::optional<ApiError> constrain_to_tool_calls(const Json& body, const PromptContext& ctx,
                                                const ProtocolLimits& limits, ParsedRequest& out) {
    if (!out.tools.forced()) return std::nullopt;
    if (out.gen.constraint) {
        return bad_request("tool_choice", "A forced tool call (tool_choice \"required\" or a named function) cannot "
                                          "be combined with response_format or another grammar");
    }
    const auto start = std::chrono::steady_clock::now();
    const ToolCallFamily family = ctx.chat_template->tool_call_family();
    out.gen.constraint.marker_tokens = tool_call_marker_tokens(*ctx.tokenizer, family);
    const GrammarCache::Compile make = [&] { return compile_tool_call_grammar(out.tools, family, limits.grammar); };
    if (ctx.grammars) {
        std::string key = std::string("tools\n") + tool_call_family_name(family);
        for (const char* field : {"tools", "tool_choice", "parallel_tool_calls"}) {
            const auto it = body.find(field);
            key += "\n" + (it == body.end() ? std::string() : dump_json(*it));
        }
        auto compiled = ctx.grammars->get(key, make, std::chrono::duration<double>(limits.grammar.table_build_seconds));
        if (!compiled) return bad_request("tools", "Cannot force a tool call: " + compiled.error());
        out.gen.constraint.grammar = compiled->grammar;
        out.gen.constraint.tables = compiled->tables;
        out.gen.constraint.compile_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return std::nullopt;
    }
    auto grammar = make();
    if (!grammar) return bad_request("tools", "Cannot force a tool call: " + grammar.error());
    out.gen.constraint.grammar = std::make_shared<const Grammar>(std::move(*grammar));
    out.gen.constraint.compile_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::nullopt;
}

// How many leading tokens of `prompt` the chat messages [0, last] render to:
// the marked prefix a cache pin keeps (the template's text for a shorter
// conversation is a prefix of the full one's in every usual template; where
// it is not, the common part is kept).
int64_t marked_prefix_tokens(const ChatTemplate& tmpl, const Tokenizer& tok, const ChatRenderInput& full,
                             int64_t last, const std::vector<int32_t>& prompt) {
    ChatRenderInput in;
    in.messages = nlohmann::ordered_json::array();
    for (int64_t i = 0; i <= last; ++i) in.messages.push_back(full.messages[static_cast<size_t>(i)]);
    in.tools = full.tools;
    in.add_generation_prompt = false;
    auto text = tmpl.render(std::move(in));
    if (!text) return 0;
    const std::vector<int32_t> ids = tok.encode(*text, {.parse_special = true});
    const auto diverge = std::mismatch(ids.begin(), ids.end(), prompt.begin(), prompt.end());
    return static_cast<int64_t>(diverge.first - ids.begin());
}

std::optional<ApiError> render_messages(FieldReader& r, const PromptContext& ctx, const MaxTokens& m,
                                        const CacheMark& mark, ParsedRequest& out) {
    const Json* messages = r.find("messages");
    if (!messages) return bad_request("messages", "'messages' is required");
    if (!messages->is_array() || messages->empty()) {
        return bad_request("messages", "'messages' must be a non-empty list of messages");
    }
    // Each message's shape is checked once, by the chat template's render.
    ChatRenderInput in;
    in.messages = *messages;  // the parsed body's own values, key order kept
    if (out.tools.offered()) {
        in.tools = out.tools.tools;
        if (!ctx.chat_template->shows_tools()) {
            in.messages = with_generic_tool_prompt(in.messages, in.tools);
        }
    }
    r.boolean("add_generation_prompt", in.add_generation_prompt);
    if (!r.ok()) return r.error();
    const bool partial_pin = !mark.whole_prompt && mark.last_message >= 0;
    const ChatRenderInput kept = partial_pin ? in : ChatRenderInput{};
    auto text = ctx.chat_template->render(std::move(in));
    if (!text) return bad_request("messages", "Chat template failed: " + text.error());
    // The rendered text, template additions included, is what gets encoded.
    if (auto err = check_prompt_bytes(text->size(), ctx, "messages", m)) return err;
    // The template writes BOS itself where the model wants it.
    out.gen.prompt = ctx.tokenizer->encode(*text, {.parse_special = true});
    if (partial_pin) {
        out.gen.cache_pin.n_tokens =
            marked_prefix_tokens(*ctx.chat_template, *ctx.tokenizer, kept, mark.last_message, out.gen.prompt);
    }
    return std::nullopt;
}

// The whole-prompt marker's pin, once the prompt is known; a message
// marker's length was set by render_messages.
void apply_cache_mark(const CacheMark& mark, ParsedRequest& out) {
    if (!mark.any()) return;
    if (mark.whole_prompt) out.gen.cache_pin.n_tokens = static_cast<int64_t>(out.gen.prompt.size());
    out.gen.cache_pin.ttl = mark.ttl;
}

// A JSON array of token ids, each in the vocabulary.
std::optional<ApiError> token_ids(const Json& arr, int32_t n_vocab, std::vector<int32_t>& out) {
    for (const Json& t : arr) {
        const auto id = json_to_int(t, 0, n_vocab - 1);
        if (!id) {
            return bad_request("prompt", "prompt token ids must be integers in [0, " + std::to_string(n_vocab) + ")");
        }
        out.push_back(static_cast<int32_t>(*id));
    }
    return std::nullopt;
}

std::optional<ApiError> tokenize_prompt(const Json& prompt, const PromptContext& ctx, const MaxTokens& m,
                                        std::vector<int32_t>& out) {
    if (prompt.is_string()) {
        const std::string& text = prompt.get_ref<const std::string&>();
        if (auto err = check_prompt_bytes(text.size(), ctx, "prompt", m)) return err;
        out = ctx.tokenizer->encode(text, {.add_special = true, .parse_special = true});
        return std::nullopt;
    }
    if (!prompt.is_array() || prompt.empty()) {
        return bad_request("prompt", "'prompt' must be a string, a list of token ids, or a list of one of those");
    }
    if (prompt[0].is_number()) return token_ids(prompt, ctx.tokenizer->n_vocab(), out);
    if (prompt.size() > 1) {
        return bad_request("prompt", "Only one prompt per request is supported; send one request per prompt",
                           "batch_not_supported");
    }
    const Json& only = prompt[0];
    if (only.is_string() || (only.is_array() && !only.empty() && only[0].is_number())) {
        return tokenize_prompt(only, ctx, m, out);
    }
    return bad_request("prompt", "'prompt' must be a string, a list of token ids, or a list of one of those");
}

}  // namespace

std::optional<ApiError> parse_chat_request(const Json& body, const PromptContext& ctx, const ProtocolLimits& limits,
                                           ParsedRequest& out) {
    out.kind = ApiKind::Chat;
    FieldReader r(body);
    read_common(r, ctx, out);
    bool logprobs = false;
    int32_t top_logprobs = 0;
    r.boolean("logprobs", logprobs);
    r.integer("top_logprobs", 0, ctx.limits.max_top_logprobs, top_logprobs);
    if (r.ok() && r.find("top_logprobs") && !logprobs) {
        r.fail(bad_request("top_logprobs", "'top_logprobs' requires 'logprobs': true"));
    }
    out.gen.top_logprobs = logprobs ? top_logprobs : -1;
    const MaxTokens m = read_max_tokens(r);
    if (!r.ok()) return r.error();
    if (auto err = check_response_size(out, m, ctx, limits, "top_logprobs")) return err;
    if (auto err = read_tool_request(body, out.tools)) return err;
    if (auto err = read_constraint(body, limits, ctx.grammars, out.gen.constraint)) return err;
    if (auto err = constrain_to_tool_calls(body, ctx, limits, out)) return err;
    CacheMark mark;
    if (auto err = find_cache_marks(body, limits.cache_control, mark)) return err;
    if (auto err = render_messages(r, ctx, m, mark, out)) return err;
    apply_cache_mark(mark, out);
    return finish(r, ctx, "messages", m, out);
}

std::optional<ApiError> parse_completion_request(const Json& body, const PromptContext& ctx,
                                                 const ProtocolLimits& limits, ParsedRequest& out) {
    out.kind = ApiKind::Completion;
    FieldReader r(body);
    read_common(r, ctx, out);
    int32_t logprobs = -1;
    r.integer("logprobs", 0, ctx.limits.max_top_logprobs, logprobs);
    out.gen.top_logprobs = logprobs;
    bool echo = false;
    r.boolean("echo", echo);
    if (echo) r.fail(bad_request("echo", "'echo' is not supported"));
    if (r.ok() && r.find("suffix")) r.fail(bad_request("suffix", "'suffix' is not supported"));
    const MaxTokens m = read_max_tokens(r);
    if (!r.ok()) return r.error();
    if (auto err = check_response_size(out, m, ctx, limits, "logprobs")) return err;
    if (auto err = read_constraint(body, limits, ctx.grammars, out.gen.constraint)) return err;
    const Json* prompt = r.find("prompt");
    if (!prompt) return bad_request("prompt", "'prompt' is required");
    if (auto err = tokenize_prompt(*prompt, ctx, m, out.gen.prompt)) return err;
    CacheMark mark;
    if (auto err = find_cache_marks(body, limits.cache_control, mark)) return err;
    apply_cache_mark(mark, out);
    return finish(r, ctx, "prompt", m, out);
}

}  // namespace tessera
