// The generation endpoints: parse and validate, submit to the engine, then
// hand the transport a reply source that either collects every choice into one
// JSON body or relays events as SSE chunks, woken by the engine per event. A
// client that goes away cancels its request in the engine.
#include <chrono>
#include <ctime>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "server/field_reader.h"
#include "server/generation_source.h"
#include "server/openai_response.h"
#include "server/server_state.h"
#include "server/tool_response.h"

namespace tessera {
namespace {

// A non-streamed reply: every choice collected, then one JSON body.
class WholeReply final : public GenerationSource {
public:
    using GenerationSource::GenerationSource;

    bool poll(std::string& out) override {
        choices_.resize(static_cast<size_t>(n_));
        drain_events([this](const StreamEvent& ev) {
            ChoiceResult& c = choices_[static_cast<size_t>(ev.index)];
            c.text += ev.text;
            c.logprobs.insert(c.logprobs.end(), ev.logprobs.begin(), ev.logprobs.end());
            if (ev.finish != FinishReason::None) c.finish = ev.finish;
            if (ev.finish == FinishReason::Error) error_ = ev.error;
        });
        if (!handle_->finished()) return false;
        if (meta_.tool_family) parse_tool_calls_out();
        const HttpReply r = finish();
        status_ = r.status;
        out = r.body;
        return true;
    }
    int final_status() const override { return status_; }

private:
    void parse_tool_calls_out() {
        for (ChoiceResult& c : choices_) {
            if (c.finish != FinishReason::Stop && c.finish != FinishReason::Length) continue;
            ToolCallOutput parsed = parse_tool_calls(c.text, *meta_.tool_family);
            c.text = std::move(parsed.content);  // without calls: the text, or what a stream sends (harmony: the final channel)
            c.reasoning = std::move(parsed.reasoning);
            c.tool_calls = std::move(parsed.calls);
        }
    }

    HttpReply finish() const {
        for (const ChoiceResult& c : choices_) {
            if (auto failed = failed_reply(engine_, c.finish, error_)) return std::move(*failed);
        }
        return json_reply(200, response_json(meta_, choices_, usage_, piece_));
    }

    std::vector<ChoiceResult> choices_;
    std::string error_;
    int status_ = 200;
};

// A streamed reply: SSE chunks as the engine produces tokens.
class EventStream final : public GenerationSource {
public:
    EventStream(HttpServer::State& state, ServedModelPtr model, ResponseMeta meta, int32_t n, bool include_usage,
                std::shared_ptr<RequestHandle> handle)
        : GenerationSource(state, std::move(model), std::move(meta), n, std::move(handle)), include_usage_(include_usage),
          offsets_(static_cast<size_t>(n), 0) {
        if (meta_.tool_family) tool_streams_.assign(static_cast<size_t>(n), ToolCallStream(*meta_.tool_family));
    }

    bool poll(std::string& out) override {
        if (!started_) {
            started_ = true;
            for (int32_t i = 0; meta_.kind == ApiKind::Chat && i < n_; ++i) {
                const ChunkPart role{.index = i, .role = true};
                out += sse_event(chunk_json(meta_, role, include_usage_));
            }
        }
        drain_events([this, &out](const StreamEvent& ev) { out += render(ev); });
        if (!handle_->finished()) return false;
        if (include_usage_) out += sse_event(usage_chunk_json(meta_, usage_));
        out += sse_done();
        return true;
    }

private:
    std::string render(const StreamEvent& ev) {
        if (ev.finish == FinishReason::Error) {
            return sse_event(internal_error("Generation failed: " + ev.error).to_json());
        }
        if (ev.text.empty() && ev.logprobs.empty() && ev.finish == FinishReason::None) return "";
        if (meta_.tool_family) return render_with_tools(ev);
        ChunkPart part{.index = ev.index, .text = ev.text, .finish = ev.finish};
        if (meta_.logprobs && meta_.kind == ApiKind::Chat) part.logprobs = chat_logprobs_json(ev.logprobs, piece_);
        if (meta_.logprobs && meta_.kind == ApiKind::Completion) {
            part.logprobs = completion_logprobs_json(ev.logprobs, piece_, offsets_[static_cast<size_t>(ev.index)]);
        }
        return sse_event(chunk_json(meta_, part, include_usage_));
    }

    // Text that may be a tool call is held back (ToolCallStream) and goes out
    // at the end as content or as tool-call deltas; logprobs go out as produced.
    std::string render_with_tools(const StreamEvent& ev) {
        ToolCallStream& held = tool_streams_[static_cast<size_t>(ev.index)];
        std::string out;
        ChunkPart part{.index = ev.index, .text = held.push(ev.text)};
        if (meta_.logprobs) part.logprobs = chat_logprobs_json(ev.logprobs, piece_);
        if (!part.text.empty() || !ev.logprobs.empty()) out += sse_event(chunk_json(meta_, part, include_usage_));
        if (ev.finish == FinishReason::None) return out;
        ToolCallOutput rest = held.finish();
        if (!rest.reasoning.empty()) {
            out += sse_event(chunk_json(meta_, ChunkPart{.index = ev.index, .reasoning = rest.reasoning}, include_usage_));
        }
        if (!rest.content.empty()) {
            out += sse_event(chunk_json(meta_, ChunkPart{.index = ev.index, .text = rest.content},
                                        include_usage_));
        }
        const uint64_t seed = meta_.tool_call_seed;
        for (size_t k = 0; k < rest.calls.size(); ++k) {
            const ChunkPart head{.index = ev.index,
                                 .tool_calls = tool_call_head_delta(rest.calls[k], k, *meta_.tool_family, seed, ev.index)};
            out += sse_event(chunk_json(meta_, head, include_usage_));
            const ChunkPart args{.index = ev.index, .tool_calls = tool_call_arguments_delta(rest.calls[k], k)};
            out += sse_event(chunk_json(meta_, args, include_usage_));
        }
        const ChunkPart last{.index = ev.index, .finish = ev.finish, .tool_calls_finish = !rest.calls.empty()};
        return out + sse_event(chunk_json(meta_, last, include_usage_));
    }

    const bool include_usage_;
    std::vector<int64_t> offsets_;  // completions text_offset per choice
    std::vector<ToolCallStream> tool_streams_;  // per choice, when tools are offered
    bool started_ = false;
};

}  // namespace

Submission submit_generation(HttpServer::State& state, ApiKind kind, const Json& body, const HttpRequest& req) {
    ModelLookup found = lookup_model(state, body_model(body));
    if (found.error) return error_reply(*found.error);
    const ServedModelPtr& model = found.model;
    Submitted s;
    s.in_flight = std::make_unique<InFlight>(state);  // before the check, so drain() cannot miss this request
    if (state.draining.load()) return error_reply(unavailable("The server is shutting down"));
    const PromptContext ctx{&model->engine->tokenizer(), model->chat_template.get(), model->engine->max_context(),
                            model->engine->options().limits, model->grammars.get()};
    s.model = model;
    ParsedRequest& pr = s.request;
    auto err = kind == ApiKind::Completion ? parse_completion_request(body, ctx, state.options.limits, pr)
                                           : parse_chat_request(body, ctx, state.options.limits, pr);
    if (err) return error_reply(*err);
    if (!pr.seed_given) pr.gen.sampling.seed = state.random_u64();
    pr.gen.cache_salt = req.cache_salt;  // from the key the screen checked
    s.meta = ResponseMeta{.kind = kind,
                          .id = make_response_id(kind, state.random_u64()),
                          .created = static_cast<int64_t>(std::time(nullptr)),
                          .model = pr.model.empty() ? model->name() : pr.model,
                          .logprobs = pr.gen.top_logprobs >= 0,
                          .tokens_as_ids = pr.tokens_as_ids};
    // A harmony reply is always parsed: its channels are never content as they stand.
    const ToolCallFamily family = model->chat_template->tool_call_family();
    if (kind == ApiKind::Chat && (pr.tools.offered() || family == ToolCallFamily::Harmony)) {
        s.meta.tool_family = family;
        s.meta.tool_call_seed = state.random_u64();
    }
    // What the key's tokens per minute reserve: the most the request can use.
    const int64_t reserve = static_cast<int64_t>(pr.gen.prompt.size()) + int64_t{pr.gen.n} * pr.gen.max_tokens;
    auto admitted = admit_request(req.key_account, reserve, "prompt + n x max_tokens", "max_tokens");
    if (auto* refused = std::get_if<HttpReply>(&admitted)) return std::move(*refused);
    s.lease = std::move(std::get<KeyLease>(admitted));
    auto handle = model->engine->submit(pr.gen);
    if (!handle) {
        s.lease.cancel();  // the server refused it, not the key's limits
        return error_reply(api_error(handle.status()));
    }
    s.handle = std::move(*handle);
    return s;
}

HttpReply handle_generation(HttpServer::State& state, ApiKind kind, const HttpRequest& req) {
    Json body;
    if (auto err = parse_json_object(req.body, state.options.limits.max_json_depth, body)) return error_reply(*err);
    Submission sub = submit_generation(state, kind, body, req);
    body = Json();
    if (auto* refused = std::get_if<HttpReply>(&sub)) return std::move(*refused);
    Submitted& s = std::get<Submitted>(sub);
    const ParsedRequest& pr = s.request;
    HttpReply reply;
    std::shared_ptr<GenerationSource> source;
    if (pr.stream) {
        reply.content_type = "text/event-stream";
        reply.headers = {{"Cache-Control", "no-cache"}, {"X-Accel-Buffering", "no"}};
        reply.streamed = true;
        source = std::make_shared<EventStream>(state, std::move(s.model), s.meta, pr.gen.n, pr.include_usage,
                                               std::move(s.handle));
    } else {
        source = std::make_shared<WholeReply>(state, std::move(s.model), s.meta, pr.gen.n, std::move(s.handle));
    }
    source->hold(std::move(s.lease));
    reply.source = std::move(source);
    return reply;
}

}  // namespace tessera
