// The /admin/models routes (only with --admin-key): list the served models,
// load one at run time on the calling HTTP thread (the others serve on), and
// unload one (new requests get 404 at once; running ones finish first).
#include <utility>

#include "server/field_reader.h"
#include "server/server_state.h"

namespace tessera {
namespace {

constexpr int kAdminJsonDepth = 8;

Json status_json(const ModelStatus& s) {
    Json j = model_spec_json(s.spec);
    j["state"] = s.state;
    j["in_flight"] = s.holders;
    if (s.model && s.model->engine) {
        const Engine& e = *s.model->engine;
        const EngineMetrics& m = e.metrics();
        j["max_model_len"] = e.max_context();
        j["kv_tokens"] = m.kv_blocks_total.load() * m.kv_block_size.load();
        j["kv_blocks_total"] = m.kv_blocks_total.load();
        j["kv_blocks_used"] = m.kv_blocks_used.load();
    }
    return j;
}

// A name in use: 409; the cap: 400 too_many_models.
ApiError reserve_error(const Status& st) {
    if (st.kind() == ErrorKind::LimitExceeded) return api_error(st.kind(), st.message(), "", "too_many_models");
    ApiError taken = api_error(ErrorKind::InvalidArgument, st.message(), "name", "model_exists");
    taken.http_status = 409;
    return taken;
}

// Runs the loader for names already reserved; serves the model or frees the names.
Status load_reserved(HttpServer::State& state, const ModelSpec& spec) {
    Expected<ServedModelPtr> loaded = state.options.loader ? state.options.loader(spec)
                                                           : Status::error("this server cannot load models");
    if (!loaded) {
        state.models.release(spec);
        return loaded.status();
    }
    state.models.add(std::move(*loaded));
    return ok_status();
}

}  // namespace

Status load_model(HttpServer::State& state, const ModelSpec& spec) {
    if (Status st = state.models.reserve(spec); !st.ok()) return st;
    return load_reserved(state, spec);
}

HttpReply handle_admin_list(HttpServer::State& state) {
    Json data = Json::array();
    for (const ModelStatus& s : state.models.status()) data.push_back(status_json(s));
    return json_reply(200, {{"object", "list"}, {"max_models", state.options.max_models}, {"data", std::move(data)}});
}

HttpReply handle_admin_load(HttpServer::State& state, const HttpRequest& req) {
    Json body;
    if (auto err = parse_json_object(req.body, kAdminJsonDepth, body)) return error_reply(*err);
    Expected<ModelSpec> spec = parse_model_spec(body);
    if (!spec) return error_reply(bad_request("", spec.error()));
    if (state.draining.load()) return error_reply(unavailable("The server is shutting down"));
    if (Status st = state.models.reserve(*spec); !st.ok()) return error_reply(reserve_error(st));
    if (Status st = load_reserved(state, *spec); !st.ok()) {
        return error_reply(api_error(ErrorKind::InvalidArgument, st.message(), "path", "model_load_failed"));
    }
    for (const ModelStatus& s : state.models.status()) {
        if (s.spec.name == spec->name) return json_reply(201, status_json(s));
    }
    return json_reply(201, model_spec_json(*spec));  // unloaded again already
}

// DELETE /admin/models/{name}: any of the model's names.
HttpReply handle_admin_unload(HttpServer::State& state, const HttpRequest& req) {
    const std::string name = req.path.substr(std::string_view("/admin/models/").size());
    const ServedModelPtr model = state.models.find(name);
    if (!model || !state.models.remove(name)) return error_reply(model_not_found(name));
    return json_reply(200, {{"name", model->name()}, {"state", "unloading"}, {"unloaded", true}});
}

}  // namespace tessera
