// POST /v1/embeddings: each input becomes an engine request of its own
// (GenerationRequest::embed), so inputs batch with each other and with chat
// traffic in the one generation loop; the reply gathers their vectors in
// input order. At most kWindow inputs of one call are in the engine at a
// time, so a call of 2048 inputs does not fill the engine's waiting queue.
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "server/embeddings_request.h"
#include "server/field_reader.h"
#include "server/key_account.h"
#include "server/server_state.h"

namespace tessera {
namespace {

constexpr size_t kWindow = 64;

class EmbeddingsReply final : public ReplySource {
public:
    EmbeddingsReply(HttpServer::State& state, ServedModelPtr served, EmbeddingsRequest request, std::string model,
                    uint64_t cache_salt)
        : state_(state), served_(std::move(served)), engine_(*served_->engine), in_flight_(state), request_(std::move(request)), model_(std::move(model)),
          cache_salt_(cache_salt), handles_(request_.inputs.size()), vectors_(request_.inputs.size()) {}
    ~EmbeddingsReply() override { cancel(); }  // no-op for finished handles

    // Submits inputs while fewer than kWindow are in the engine. Errors: the
    // engine's (429 when its queue is full, 503 when shutting down).
    Status submit_more() {
        while (next_ < handles_.size() && next_ - n_done_ < kWindow) {
            GenerationRequest r;
            r.prompt = std::move(request_.inputs[next_]);
            r.embed = true;
            r.cache_salt = cache_salt_;
            auto h = engine_.submit(std::move(r));
            if (!h) return h.status();
            if (wake_) (*h)->set_listener(wake_);
            handles_[next_++] = std::move(*h);
        }
        return ok_status();
    }

    void set_waker(std::function<void()> wake) override {
        wake_ = std::move(wake);
        for (size_t i = n_done_; i < next_; ++i) handles_[i]->set_listener(wake_);
        if (state_.stopping.load()) cancel();
    }

    bool poll(std::string& out) override {
        while (true) {
            for (size_t i = n_done_; i < next_ && !error_; ++i) take_events(i);
            while (!error_ && n_done_ < next_ && !vectors_[n_done_].empty()) ++n_done_;
            if (error_ || n_done_ == handles_.size()) break;
            const size_t submitted = next_;
            if (const Status st = submit_more(); !st.ok()) {
                error_ = api_error(st);
                break;
            }
            if (next_ == submitted) return false;  // all in, or the window is full: a listener wakes us
            // Loop: the new inputs may have finished before their listener was set.
        }
        if (error_) {
            cancel();
            status_ = error_->http_status;
            out = error_->body();
            return true;
        }
        lease_.settle(request_.n_tokens, 0, 0);
        out = dump_json(response());
        return true;
    }

    int final_status() const override { return status_; }
    // The API key's lease, settled with the input tokens once every vector is in.
    void hold(KeyLease lease) { lease_ = std::move(lease); }
    ReplyUsage usage() const override { return {request_.n_tokens, 0, std::nullopt}; }
    void cancel() override {
        for (size_t i = n_done_; i < next_; ++i) handles_[i]->cancel();
    }

private:
    void take_events(size_t i) {
        while (auto ev = handles_[i]->next(std::chrono::milliseconds(0))) {
            if (ev->finish == FinishReason::Stop && !ev->embedding.empty()) {
                vectors_[i] = std::move(ev->embedding);
            } else if (ev->finish == FinishReason::Error) {
                error_ = engine_.model_damaged() ? unavailable(ev->error)
                                                 : internal_error("Embedding failed: " + ev->error);
            } else if (ev->finish != FinishReason::None) {
                error_ = unavailable("The request was cancelled (server shutting down)");
            }
        }
    }

    Json response() const {
        Json data = Json::array();
        for (size_t i = 0; i < vectors_.size(); ++i) {
            Json item = {{"object", "embedding"}, {"index", i}};
            if (request_.base64) {
                item["embedding"] = embedding_base64(vectors_[i]);
            } else {
                item["embedding"] = vectors_[i];
            }
            data.push_back(std::move(item));
        }
        return {{"object", "list"},
                {"data", std::move(data)},
                {"model", model_},
                {"usage", {{"prompt_tokens", request_.n_tokens}, {"total_tokens", request_.n_tokens}}}};
    }

    HttpServer::State& state_;
    const ServedModelPtr served_;  // held until the reply is gone (an unload waits)
    Engine& engine_;
    InFlight in_flight_;
    EmbeddingsRequest request_;  // inputs are moved out as they are submitted
    const std::string model_;
    const uint64_t cache_salt_;
    std::function<void()> wake_;
    std::vector<std::shared_ptr<RequestHandle>> handles_;  // [n_inputs], submitted ones set
    std::vector<std::vector<float>> vectors_;               // [n_inputs] each [n_embd] once done
    size_t next_ = 0;    // inputs submitted
    size_t n_done_ = 0;  // leading inputs with their vector
    std::optional<ApiError> error_;
    int status_ = 200;
    KeyLease lease_;  // dropped unsettled (an error, the client gone): charged in full
};

}  // namespace

HttpReply handle_embeddings(HttpServer::State& state, const HttpRequest& req) {
    Json body;
    if (auto err = parse_json_object(req.body, state.options.limits.max_json_depth, body)) return error_reply(*err);
    ModelLookup found = lookup_model(state, body_model(body));
    if (found.error) return error_reply(*found.error);
    Engine& engine = *found.model->engine;
    if (auto pooling = engine.embedding_pooling(); !pooling) return error_reply(bad_request("model", pooling.error()));
    const EmbeddingsContext ctx{&engine.tokenizer(), engine.max_context(), engine.model_config().n_embd,
                                engine.options().limits};
    EmbeddingsRequest parsed;
    if (auto err = parse_embeddings_request(body, ctx, parsed)) return error_reply(*err);
    body = Json();
    std::string name = parsed.model.empty() ? found.model->name() : parsed.model;
    // Embeddings spend only prompt tokens, known exactly here.
    auto admitted = admit_request(req.key_account, parsed.n_tokens, "input tokens", "input");
    if (auto* refused = std::get_if<HttpReply>(&admitted)) return std::move(*refused);
    KeyLease lease = std::move(std::get<KeyLease>(admitted));
    auto source = std::make_shared<EmbeddingsReply>(state, std::move(found.model), std::move(parsed), std::move(name),
                                                    req.cache_salt);
    // Counted in flight (by the source) before this check, so drain() cannot miss it.
    if (state.draining.load()) {
        lease.cancel();
        return error_reply(unavailable("The server is shutting down"));
    }
    // The first window goes in here, so a full queue is a plain 429 at once.
    if (const Status st = source->submit_more(); !st.ok()) {
        lease.cancel();
        return error_reply(api_error(st));
    }
    source->hold(std::move(lease));
    HttpReply reply;
    reply.source = std::move(source);
    return reply;
}

}  // namespace tessera
