// The generation endpoints: parse and validate, submit to the engine, then
// either collect every choice into one JSON response or relay events as SSE
// chunks. A client that goes away cancels its request in the engine.
#include <chrono>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "core/check.h"
#include "server/connection_probe.h"
#include "server/field_reader.h"
#include "server/openai_response.h"
#include "server/server_state.h"

namespace tessera {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(100);

TokenPieceFn piece_fn(const Tokenizer& tok) {
    return [&tok](int32_t id) { return tok.token_to_piece(id, true); };
}

void add_final_counts(const StreamEvent& ev, UsageCounts& usage) {
    usage.prompt_tokens = ev.prompt_tokens;  // the same prompt for every choice
    usage.completion_tokens += ev.completion_tokens;
    usage.cached_tokens = std::max(usage.cached_tokens, ev.cached_tokens);
}

// Cancels the request when the server stops or the client has gone, checked
// at most once per poll interval.
class DisconnectWatch {
public:
    DisconnectWatch(const HttpServer::State& state, const httplib::Request& req)
        : state_(state), probe_(req.local_addr, req.local_port, req.remote_addr, req.remote_port) {}

    void check(RequestHandle& handle) {
        const auto now = Clock::now();
        if (now - last_ < kPollInterval) return;
        last_ = now;
        if (state_.stopping.load() || probe_.peer_closed()) handle.cancel();
    }

private:
    const HttpServer::State& state_;
    ConnectionProbe probe_;
    Clock::time_point last_ = Clock::now();
};

void respond_whole(HttpServer::State& state, const ResponseMeta& meta, int32_t n, RequestHandle& handle,
                   const Tokenizer& tok, const httplib::Request& req, httplib::Response& res) {
    std::vector<ChoiceResult> choices(static_cast<size_t>(n));
    UsageCounts usage;
    std::string error;
    DisconnectWatch watch(state, req);
    while (!handle.finished()) {
        if (auto ev = handle.next(kPollInterval)) {
            TS_CHECK(ev->index >= 0 && ev->index < n);
            ChoiceResult& c = choices[static_cast<size_t>(ev->index)];
            c.text += ev->text;
            c.logprobs.insert(c.logprobs.end(), ev->logprobs.begin(), ev->logprobs.end());
            if (ev->finish != FinishReason::None) {
                c.finish = ev->finish;
                add_final_counts(*ev, usage);
                if (ev->finish == FinishReason::Error) error = ev->error;
            }
        }
        watch.check(handle);
    }
    for (const ChoiceResult& c : choices) {
        if (c.finish == FinishReason::Error) return send_error(res, internal_error("Generation failed: " + error));
        if (c.finish == FinishReason::Cancelled) {
            return send_error(res, unavailable("The request was cancelled (server shutting down)"));
        }
    }
    send_json(res, 200, response_json(meta, choices, usage, piece_fn(tok)));
}

// One streaming response; lives as long as httplib's content provider.
class EventStream {
public:
    EventStream(HttpServer::State& state, const httplib::Request& req, ResponseMeta meta, int32_t n,
                bool include_usage, std::shared_ptr<RequestHandle> handle, const Tokenizer& tok)
        : in_flight_(state), meta_(std::move(meta)), n_(n), include_usage_(include_usage), handle_(std::move(handle)),
          piece_(piece_fn(tok)), offsets_(static_cast<size_t>(n), 0), watch_(state, req) {}
    ~EventStream() { handle_->cancel(); }  // no-op once finished; stops the engine when the client left

    // One step of the provider loop: false ends the response (client gone).
    bool pump(httplib::DataSink& sink) {
        std::string out;
        if (!started_) {
            started_ = true;
            for (int32_t i = 0; meta_.kind == ApiKind::Chat && i < n_; ++i) {
                const ChunkPart role{i, "", true, FinishReason::None, nullptr};
                out += sse_event(chunk_json(meta_, role, include_usage_));
            }
        }
        if (auto ev = handle_->next(kPollInterval)) out += render(*ev);
        watch_.check(*handle_);
        if (handle_->finished()) {
            if (include_usage_) out += sse_event(usage_chunk_json(meta_, usage_));
            out += sse_done();
        }
        if (!out.empty() && !sink.write(out.data(), out.size())) return false;
        if (handle_->finished()) sink.done();
        return true;
    }

private:
    std::string render(const StreamEvent& ev) {
        TS_CHECK(ev.index >= 0 && ev.index < n_);
        if (ev.finish != FinishReason::None) add_final_counts(ev, usage_);
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

    InFlight in_flight_;
    const ResponseMeta meta_;
    const int32_t n_;
    const bool include_usage_;
    std::shared_ptr<RequestHandle> handle_;
    TokenPieceFn piece_;
    std::vector<int64_t> offsets_;  // completions text_offset per choice
    UsageCounts usage_;
    DisconnectWatch watch_;
    bool started_ = false;
};

void respond_stream(HttpServer::State& state, const ResponseMeta& meta, const ParsedRequest& pr,
                    std::shared_ptr<RequestHandle> handle, const Tokenizer& tok, const httplib::Request& req,
                    httplib::Response& res) {
    auto stream = std::make_shared<EventStream>(state, req, meta, pr.gen.n, pr.include_usage, std::move(handle), tok);
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    res.set_chunked_content_provider("text/event-stream",
                                     [stream](size_t, httplib::DataSink& sink) { return stream->pump(sink); });
}

std::optional<ApiError> parse_request(HttpServer::State& state, ApiKind kind, const ServingModel& model,
                                      const httplib::Request& req, ParsedRequest& out) {
    Json body;
    if (auto err = parse_json_object(req.body, state.options.limits.max_json_depth, body)) return err;
    const PromptContext ctx{&model.engine->tokenizer(), &model.chat_template, model.bos_token, model.eos_token,
                            model.engine->max_context()};
    auto err = kind == ApiKind::Chat ? parse_chat_request(body, ctx, state.options.limits, out)
                                     : parse_completion_request(body, ctx, state.options.limits, out);
    if (err) return err;
    if (!out.seed_given) out.gen.sampling.seed = state.random_u64();
    // Authentication already passed; the key picks the prefix-cache domain.
    out.gen.cache_salt = state.options.api_keys.check(req.get_header_value("Authorization")).value_or(0);
    return std::nullopt;
}

}  // namespace

void handle_generation(HttpServer::State& state, ApiKind kind, const httplib::Request& req,
                       httplib::Response& res) {
    const ServingModel* model = state.model.load();
    if (!model) return send_error(res, unavailable("The model is still loading"));
    const InFlight in_flight(state);  // before the check, so drain() cannot miss this request
    if (state.draining.load()) return send_error(res, unavailable("The server is shutting down"));
    ParsedRequest pr;
    if (auto err = parse_request(state, kind, *model, req, pr)) return send_error(res, *err);
    const ResponseMeta meta{kind, make_response_id(kind, state.random_u64()), static_cast<int64_t>(std::time(nullptr)),
                            pr.model.empty() ? state.options.model_name : pr.model, pr.gen.top_logprobs >= 0};
    auto handle = model->engine->submit(pr.gen);
    if (!handle) {
        if (is_overloaded(handle.status())) return send_error(res, overloaded(handle.error()));
        return send_error(res, bad_request("", handle.error()));
    }
    const Tokenizer& tok = model->engine->tokenizer();
    if (pr.stream) return respond_stream(state, meta, pr, std::move(*handle), tok, req, res);
    respond_whole(state, meta, pr.gen.n, **handle, tok, req, res);
}

}  // namespace tessera
