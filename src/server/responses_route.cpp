// POST /v1/responses: the request translated to a chat body (responses_api.h),
// submitted like a chat completion, and answered as one `response` object or
// as the Responses stream's typed SSE events.
#include <memory>
#include <string>
#include <utility>
#include <variant>

#include "server/field_reader.h"
#include "server/generation_source.h"
#include "server/responses_api.h"

namespace tessera {
namespace {

ResponseIds ids_for(const ResponseMeta& meta) {
    // make_response_id gives "resp_<hex>"; the message item shares the hex.
    return {meta.id, "msg_" + meta.id.substr(meta.id.find('_') + 1)};
}

class WholeResponse final : public GenerationSource {
public:
    WholeResponse(HttpServer::State& state, ServedModelPtr model, ResponseMeta meta, ResponsesEcho echo,
                  std::shared_ptr<RequestHandle> handle)
        : GenerationSource(state, std::move(model), std::move(meta), 1, std::move(handle)), echo_(std::move(echo)) {}

    bool poll(std::string& out) override {
        drain_events([this](const StreamEvent& ev) {
            text_ += ev.text;
            if (ev.finish != FinishReason::None) finish_ = ev.finish;
            if (ev.finish == FinishReason::Error) error_ = ev.error;
        });
        if (!handle_->finished()) return false;
        HttpReply r = failed_reply(engine_, finish_, error_)
                          .value_or(json_reply(200, response_object(meta_, ids_for(meta_), echo_, text_, finish_, &usage_)));
        status_ = r.status;
        out = std::move(r.body);
        return true;
    }
    int final_status() const override { return status_; }

private:
    const ResponsesEcho echo_;
    std::string text_;
    FinishReason finish_ = FinishReason::None;
    std::string error_;
    int status_ = 200;
};

// The Responses stream: created / in_progress, the message item and its text
// part opened, a delta per piece of text, then each closed and completed (or
// incomplete at max_output_tokens, or failed).
class ResponseStream final : public GenerationSource {
public:
    ResponseStream(HttpServer::State& state, ServedModelPtr model, ResponseMeta meta, ResponsesEcho echo,
                   std::shared_ptr<RequestHandle> handle)
        : GenerationSource(state, std::move(model), std::move(meta), 1, std::move(handle)), echo_(std::move(echo)),
          ids_(ids_for(meta_)) {}

    bool poll(std::string& out) override {
        if (!started_) {
            started_ = true;
            const Json in_progress = response_object(meta_, ids_, echo_, "", FinishReason::None, nullptr);
            out += event("response.created", {{"response", in_progress}});
            out += event("response.in_progress", {{"response", in_progress}});
            out += event("response.output_item.added", {{"output_index", 0}, {"item", message_item(ids_, nullptr)}});
            out += event("response.content_part.added", part_fields({{"part", output_text_part("")}}));
        }
        drain_events([this, &out](const StreamEvent& ev) {
            if (!ev.text.empty()) {
                text_ += ev.text;
                out += event("response.output_text.delta", part_fields({{"delta", ev.text}}));
            }
            if (ev.finish != FinishReason::None) out += close(ev);
        });
        return handle_->finished();
    }

private:
    std::string close(const StreamEvent& ev) {
        if (ev.finish == FinishReason::Error || ev.finish == FinishReason::Cancelled) {
            Json failed = response_object(meta_, ids_, echo_, text_, FinishReason::Stop, &usage_);
            failed["status"] = "failed";
            failed["output"] = Json::array();
            failed["error"] = {{"code", "server_error"},
                               {"message", ev.finish == FinishReason::Error ? "Generation failed: " + ev.error
                                                                            : "The request was cancelled"}};
            return event("response.failed", {{"response", std::move(failed)}});
        }
        std::string out = event("response.output_text.done", part_fields({{"text", text_}}));
        out += event("response.content_part.done", part_fields({{"part", output_text_part(text_)}}));
        out += event("response.output_item.done", {{"output_index", 0}, {"item", message_item(ids_, &text_)}});
        const char* type = ev.finish == FinishReason::Length ? "response.incomplete" : "response.completed";
        out += event(type, {{"response", response_object(meta_, ids_, echo_, text_, ev.finish, &usage_)}});
        return out;
    }

    Json part_fields(Json extra) const {
        extra["item_id"] = ids_.message;
        extra["output_index"] = 0;
        extra["content_index"] = 0;
        return extra;
    }
    std::string event(const char* type, Json data) { return responses_event(type, std::move(data), sequence_); }

    const ResponsesEcho echo_;
    const ResponseIds ids_;
    std::string text_;
    int64_t sequence_ = 0;
    bool started_ = false;
};

}  // namespace

HttpReply handle_responses(HttpServer::State& state, const HttpRequest& req) {
    Json body;
    if (auto err = parse_json_object(req.body, state.options.limits.max_json_depth, body)) return error_reply(*err);
    Json chat;
    if (auto err = responses_to_chat_body(body, chat)) return error_reply(*err);
    ResponsesEcho echo = responses_echo(body);
    body = Json();
    Submission sub = submit_generation(state, ApiKind::Responses, chat, req);
    if (auto* refused = std::get_if<HttpReply>(&sub)) return std::move(*refused);
    Submitted& s = std::get<Submitted>(sub);
    HttpReply reply;
    std::shared_ptr<GenerationSource> source;
    if (s.request.stream) {
        reply.content_type = "text/event-stream";
        reply.headers = {{"Cache-Control", "no-cache"}, {"X-Accel-Buffering", "no"}};
        reply.streamed = true;
        source = std::make_shared<ResponseStream>(state, std::move(s.model), s.meta, std::move(echo),
                                                  std::move(s.handle));
    } else {
        source = std::make_shared<WholeResponse>(state, std::move(s.model), s.meta, std::move(echo),
                                                 std::move(s.handle));
    }
    source->hold(std::move(s.lease));
    reply.source = std::move(source);
    return reply;
}

}  // namespace tessera
