// The models a server serves, by name: a request looks its model up once and
// holds the shared_ptr for its whole life, so unloading a model (new requests
// get 404 at once) never pulls it from under a running request; the last
// holder's release frees it, on the registry's own thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "engine/engine.h"
#include "grammar/grammar_cache.h"
#include "model/model.h"
#include "server/model_spec.h"
#include "template/chat_render.h"
#include "tokenizer/tokenizer.h"

namespace tessera {

// One loaded model and everything that keeps it alive. Members are destroyed
// bottom-up: the engine stops before the tokenizer, template and weights it reads.
struct ServedModel {
    ModelSpec spec;  // its names and how it was asked for
    std::unique_ptr<Model> model;
    std::unique_ptr<Tokenizer> tokenizer;
    std::unique_ptr<ChatTemplate> chat_template;  // compiled once, at load
    std::unique_ptr<Engine> engine;
    // Compiled request grammars and their tables over the engine's grammar
    // vocabulary, shared by requests with the same constraint text.
    std::unique_ptr<GrammarCache> grammars;

    const std::string& name() const { return spec.name; }
};
using ServedModelPtr = std::shared_ptr<const ServedModel>;

// Loads a model for the server (the CLI provides it, so server/ need not know
// how flags become engine options). Runs on the calling thread.
using ModelLoader = std::function<Expected<ServedModelPtr>(const ModelSpec&)>;

// GET /admin/models' view of one model.
struct ModelStatus {
    ModelSpec spec;
    const char* state = "ready";  // loading | ready | unloading
    int64_t holders = 0;          // requests (and other handlers) holding it now
    ServedModelPtr model;         // null while loading
};

class ModelRegistry {
public:
    explicit ModelRegistry(size_t max_models);
    ~ModelRegistry();
    ModelRegistry(const ModelRegistry&) = delete;
    ModelRegistry& operator=(const ModelRegistry&) = delete;

    // Claims the spec's names for a load about to run. Errors: a name in use
    // or being loaded (InvalidArgument, code model_exists), the cap reached
    // (LimitExceeded). Every reserve() is followed by add() or release().
    Status reserve(const ModelSpec& spec);
    void release(const ModelSpec& spec);
    // Serves a loaded model under its (reserved) names, after those already listed.
    void add(ServedModelPtr model);

    // The model serving `name` (empty: the first listed); null when none does.
    ServedModelPtr find(std::string_view name) const;
    // Stops serving `name`'s model (any of its names): later find()s miss at
    // once; it is freed once no request holds it. False when unknown.
    bool remove(std::string_view name);

    std::vector<ServedModelPtr> models() const;  // in listing order
    std::vector<ModelStatus> status() const;     // loading, ready, then unloading ones
    size_t size() const;

private:
    void reap_loop();
    bool name_taken(const std::string& name) const;  // under mu_

    const size_t max_models_;
    mutable std::mutex mu_;
    std::condition_variable wake_;
    std::vector<ServedModelPtr> models_;             // served, in order
    std::map<std::string, ServedModelPtr, std::less<>> by_name_;  // every name and alias
    std::vector<ModelSpec> loading_;                 // reserved, not yet added
    std::vector<ServedModelPtr> retiring_;           // removed, still held by requests
    bool stop_ = false;
    std::thread reaper_;
};

}  // namespace tessera
