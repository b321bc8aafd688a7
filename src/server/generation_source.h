// What every generation reply shares, whatever its shape (chat or text
// completion, OpenAI Responses; whole or streamed): the engine's handle, woken
// per event, the usage counts, cancellation when the client goes, the server
// stops, or the reply is dropped, and the model, held until the last byte
// (an unload waits for it). Internal to src/server.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "core/check.h"
#include "server/key_account.h"
#include "server/openai_response.h"
#include "server/server_state.h"

namespace tessera {

// How logprobs name a token: its text, or (as_ids) vLLM's "token_id:N",
// which stays unambiguous where pieces repeat or split UTF-8 sequences.
inline TokenPieceFn piece_fn(const Tokenizer& tok, bool as_ids) {
    if (as_ids) return [](int32_t id) { return "token_id:" + std::to_string(id); };
    return [&tok](int32_t id) { return tok.token_to_piece(id, {.render_special = true}); };
}

inline void add_final_counts(const StreamEvent& ev, UsageCounts& usage) {
    usage.prompt_tokens = ev.prompt_tokens;  // the same prompt for every choice
    usage.completion_tokens += ev.completion_tokens;
    usage.cached_tokens = std::max(usage.cached_tokens, ev.cached_tokens);
    usage.cache_write_tokens = std::max(usage.cache_write_tokens, ev.cache_write_tokens);
}

class GenerationSource : public ReplySource {
public:
    GenerationSource(HttpServer::State& state, ServedModelPtr model, ResponseMeta meta, int32_t n,
                     std::shared_ptr<RequestHandle> handle)
        : state_(state), model_(std::move(model)), engine_(*model_->engine), in_flight_(state), meta_(std::move(meta)),
          n_(n), handle_(std::move(handle)), piece_(piece_fn(engine_.tokenizer(), meta_.tokens_as_ids)) {}
    ~GenerationSource() override { handle_->cancel(); }  // no-op once finished

    void set_waker(std::function<void()> wake) override {
        handle_->set_listener(std::move(wake));
        if (state_.stopping.load()) handle_->cancel();  // began after drain() cancelled the others
    }
    void cancel() override { handle_->cancel(); }
    // The API key's lease, settled with this reply's usage once it is known.
    void hold(KeyLease lease) { lease_ = std::move(lease); }
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
        if (handle_->finished()) lease_.settle(usage_.prompt_tokens, usage_.cached_tokens, usage_.completion_tokens);
    }

    HttpServer::State& state_;
    const ServedModelPtr model_;
    const Engine& engine_;
    InFlight in_flight_;
    const ResponseMeta meta_;
    const int32_t n_;
    std::shared_ptr<RequestHandle> handle_;
    TokenPieceFn piece_;
    UsageCounts usage_;
    std::optional<std::chrono::steady_clock::time_point> first_token_;
    KeyLease lease_;  // settled once finished (or, dropped unfinished, charged in full)
};

// The error reply of a whole (non-streamed) response whose generation ended
// in an error or was cancelled; nullopt for a normal finish.
inline std::optional<HttpReply> failed_reply(const Engine& engine, FinishReason finish, const std::string& error) {
    if (finish == FinishReason::Error && engine.model_damaged()) return error_reply(unavailable(error));
    if (finish == FinishReason::Error) return error_reply(internal_error("Generation failed: " + error));
    if (finish == FinishReason::Cancelled) return error_reply(unavailable("The request was cancelled (server shutting down)"));
    return std::nullopt;
}

// A generation request validated and in the engine.
struct Submitted {
    ParsedRequest request;
    ResponseMeta meta;
    std::shared_ptr<RequestHandle> handle;
    ServedModelPtr model;
    std::unique_ptr<InFlight> in_flight;  // until the reply's source counts it
    KeyLease lease;                       // until the reply's source holds it
};
using Submission = std::variant<Submitted, HttpReply>;  // or the refusal

// Parses `body` as `kind` (Responses: an already translated chat body),
// looks the model up, seeds, admits it under the key's limits (reserving
// prompt + n x max_tokens tokens), and submits to its engine.
Submission submit_generation(HttpServer::State& state, ApiKind kind, const Json& body, const HttpRequest& req);

}  // namespace tessera
