// The generation endpoints: parse and validate, submit to the engine, then
// hand the transport a reply source that either collects every choice into one
// JSON body or relays events as SSE chunks, woken by the engine per event. A
// client that goes away cancels its request in the engine.
#include <chrono>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "core/check.h"
#include "server/field_reader.h"
#include "server/openai_response.h"
#include "server/server_state.h"

namespace tessera {
namespace {

TokenPieceFn piece_fn(const Tokenizer& tok) {
    return [&tok](int32_t id) { return tok.token_to_piece(id, true); };
}

void add_final_counts(const StreamEvent& ev, UsageCounts& usage) {
    usage.prompt_tokens = ev.prompt_tokens;  // the same prompt for every choice
    usage.completion_tokens += ev.completion_tokens;
    usage.cached_tokens = std::max(usage.cached_tokens, ev.cached_tokens);
}

// What both reply shapes share: the engine's handle, woken per event, and
// cancelled when the client goes, the server stops, or the reply is dropped.
class GenerationSource : public ReplySource {
public:
    GenerationSource(HttpServer::State& state, const Engine& engine, ResponseMeta meta, int32_t n,
                     std::shared_ptr<RequestHandle> handle)
        : state_(state), engine_(engine), in_flight_(state), meta_(std::move(meta)), n_(n), handle_(std::move(handle)),
          piece_(piece_fn(engine.tokenizer())) {}
    ~GenerationSource() override { handle_->cancel(); }  // no-op once finished

    void set_waker(std::function<void()> wake) override {
        handle_->set_listener(std::move(wake));
        if (state_.stopping.load()) handle_->cancel();  // began after drain() cancelled the others
    }
    void cancel() override { handle_->cancel(); }
    ReplyUsage usage() const override { return {usage_.prompt_tokens, usage_.completion_tokens, first_token_}; }

protected:
    // Takes every event ready now.
    template <class Fn>
    void drain_events(Fn on_event) {
        while (auto ev = handle_->next(std::chrono::milliseconds(0))) {
            TS_CHECK(ev->index >= 0 && ev->index < n_);
            if (!first_token_ && !ev->tokens.empty()) first_token_ = std::chrono::steady_clock::now();
            if (ev->finish != FinishReason::None) add_final_counts(*ev, usage_);
            on_event(*ev);
        }
    }

    HttpServer::State& state_;
    const Engine& engine_;
    InFlight in_flight_;
    const ResponseMeta meta_;
    const int32_t n_;
    std::shared_ptr<RequestHandle> handle_;
    TokenPieceFn piece_;
    UsageCounts usage_;
    std::optional<std::chrono::steady_clock::time_point> first_token_;
};

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
        const HttpReply r = finish();
        status_ = r.status;
        out = r.body;
        return true;
    }
    int final_status() const override { return status_; }

private:
    HttpReply finish() const {
        for (const ChoiceResult& c : choices_) {
            if (c.finish == FinishReason::Error && engine_.model_damaged()) return error_reply(unavailable(error_));
            if (c.finish == FinishReason::Error) return error_reply(internal_error("Generation failed: " + error_));
            if (c.finish == FinishReason::Cancelled) {
                return error_reply(unavailable("The request was cancelled (server shutting down)"));
            }
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
    EventStream(HttpServer::State& state, const Engine& engine, ResponseMeta meta, int32_t n, bool include_usage,
                std::shared_ptr<RequestHandle> handle)
        : GenerationSource(state, engine, std::move(meta), n, std::move(handle)), include_usage_(include_usage),
          offsets_(static_cast<size_t>(n), 0) {}

    bool poll(std::string& out) override {
        if (!started_) {
            started_ = true;
            for (int32_t i = 0; meta_.kind == ApiKind::Chat && i < n_; ++i) {
                const ChunkPart role{i, "", true, FinishReason::None, nullptr};
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
        ChunkPart part{ev.index, ev.text, false, ev.finish, nullptr};
        if (meta_.logprobs && meta_.kind == ApiKind::Chat) part.logprobs = chat_logprobs_json(ev.logprobs, piece_);
        if (meta_.logprobs && meta_.kind == ApiKind::Completion) {
            part.logprobs = completion_logprobs_json(ev.logprobs, piece_, offsets_[static_cast<size_t>(ev.index)]);
        }
        return sse_event(chunk_json(meta_, part, include_usage_));
    }

    const bool include_usage_;
    std::vector<int64_t> offsets_;  // completions text_offset per choice
    bool started_ = false;
};

std::optional<ApiError> parse_request(HttpServer::State& state, ApiKind kind, const ServingModel& model,
                                      const HttpRequest& req, ParsedRequest& out) {
    Json body;
    if (auto err = parse_json_object(req.body, state.options.limits.max_json_depth, body)) return err;
    const PromptContext ctx{&model.engine->tokenizer(), &model.chat_template, model.bos_token, model.eos_token,
                            model.engine->max_context()};
    auto err = kind == ApiKind::Chat ? parse_chat_request(body, ctx, state.options.limits, out)
                                     : parse_completion_request(body, ctx, state.options.limits, out);
    if (err) return err;
    if (!out.seed_given) out.gen.sampling.seed = state.random_u64();
    // Authentication already passed; the key picks the prefix-cache domain.
    out.gen.cache_salt = state.options.api_keys.check(req.authorization).value_or(0);
    return std::nullopt;
}

}  // namespace

HttpReply handle_generation(HttpServer::State& state, ApiKind kind, const HttpRequest& req) {
    const ServingModel* model = state.model.load();
    if (!model) return error_reply(unavailable("The model is still loading"));
    const InFlight in_flight(state);  // before the check, so drain() cannot miss this request
    if (state.draining.load()) return error_reply(unavailable("The server is shutting down"));
    ParsedRequest pr;
    if (auto err = parse_request(state, kind, *model, req, pr)) return error_reply(*err);
    if (!pr.model.empty() && !serves_model(state, pr.model)) return error_reply(model_not_found(pr.model));
    const ResponseMeta meta{kind, make_response_id(kind, state.random_u64()), static_cast<int64_t>(std::time(nullptr)),
                            pr.model.empty() ? state.options.model_names.front() : pr.model, pr.gen.top_logprobs >= 0};
    auto handle = model->engine->submit(pr.gen);
    if (!handle) {
        if (is_overloaded(handle.status())) return error_reply(overloaded(handle.error()));
        if (model->engine->model_damaged()) return error_reply(unavailable(handle.error()));
        return error_reply(bad_request("", handle.error()));
    }
    const Engine& engine = *model->engine;
    HttpReply reply;
    if (pr.stream) {
        reply.content_type = "text/event-stream";
        reply.headers = {{"Cache-Control", "no-cache"}, {"X-Accel-Buffering", "no"}};
        reply.streamed = true;
        reply.source = std::make_shared<EventStream>(state, engine, meta, pr.gen.n, pr.include_usage, std::move(*handle));
    } else {
        reply.source = std::make_shared<WholeReply>(state, engine, meta, pr.gen.n, std::move(*handle));
    }
    return reply;
}

}  // namespace tessera
