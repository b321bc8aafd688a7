// `tessera serve`'s model list and loader (serve_models.h).
#include "cli/serve_models.h"

#include <cstdio>
#include <filesystem>

#include "cli/chat_session.h"
#include "template/builtin_templates.h"

namespace tessera {
namespace {

// --model: an existing file is a path (even with '=' in it), else NAME=PATH.
Expected<ModelSpec> model_arg_spec(const std::string& arg) {
    ModelSpec spec;
    const size_t eq = arg.find('=');
    std::error_code ec;
    if (eq == std::string::npos || std::filesystem::exists(arg, ec)) {
        spec.path = arg;
        spec.name = std::filesystem::path(arg).stem().string();
    } else {
        spec.name = arg.substr(0, eq);
        spec.path = arg.substr(eq + 1);
    }
    if (spec.path.empty()) return Status::error("--model " + arg + ": no file after '='");
    if (Status st = check_model_name(spec.name); !st.ok()) return Status::error("--model " + arg + ": the name " + st.message());
    return spec;
}

Expected<std::vector<ModelSpec>> models_file_specs(const std::string& path) {
    auto text = read_text(path);
    if (!text) return Status::error("--models-file: " + text.error());
    auto specs = parse_models_file(*text);
    if (!specs) return Status::error("--models-file " + path + ": " + specs.error());
    return specs;
}

// A built-in template name, else a file.
Expected<std::string> chat_template_source(const std::string& name_or_path) {
    if (auto builtin = builtin_chat_template(name_or_path)) return std::move(*builtin);
    auto text = read_text(name_or_path);
    if (!text) return Status::error(text.error() + " (nor is it a built-in name: " + builtin_chat_template_names() + ")");
    return std::move(*text);
}

// The model's own template, or the spec's; one that does not compile is an
// error when asked for by name, else a warning (text completions still work).
Expected<std::unique_ptr<ChatTemplate>> compile_template(LoadedModel& files, const ModelSpec& spec) {
    ModelChatTemplate& t = files.chat_template;
    if (!spec.chat_template.empty()) {
        auto source = chat_template_source(spec.chat_template);
        if (!source) return Status::error("chat template: " + source.error());
        t.source = std::move(*source);
        t.warning.clear();
    }
    if (!t.warning.empty()) std::fprintf(stderr, "tessera serve: %s: warning: %s\n", spec.name.c_str(), t.warning.c_str());
    auto compiled = std::make_unique<ChatTemplate>(t.source, t.bos, t.eos);
    if (!compiled->compile_status().ok()) {
        const std::string& why = compiled->compile_status().message();
        if (!spec.chat_template.empty()) return Status::error("chat template " + spec.chat_template + ": " + why);
        std::fprintf(stderr, "tessera serve: %s: warning: the model's chat template does not compile, so chat requests "
                             "will fail (text completions work): %s\n", spec.name.c_str(), why.c_str());
    }
    return compiled;
}

EngineOptions engine_options_for(const EngineOptions& defaults, const ModelSpec& spec) {
    EngineOptions o = defaults;
    if (spec.ctx_size) {
        o.ctx_size = *spec.ctx_size;
        o.kv_memory_bytes = 0;  // a per-model size wins over the server's --kv-memory
    }
    if (spec.kv_memory) o.kv_memory_bytes = *spec.kv_memory;
    return o;
}

Expected<ServedModelPtr> load_served_model(const EngineOptions& defaults, const SpecFlags& spec_flags,
                                           size_t grammar_cache_bytes, const ModelSpec& spec) {
    auto files = LoadedModel::open_files(spec.path);
    if (!files) return files.status();
    auto chat_template = compile_template(**files, spec);
    if (!chat_template) return chat_template.status();
    EngineOptions options = engine_options_for(defaults, spec);
    SpecFlags sf = spec_flags;
    sf.draft_model = spec.draft_model;
    if (sf.mode == "draft" && sf.draft_model.empty()) sf.mode = "none";  // the server's draft is not this model's
    // The draft model's KV holds as many tokens as the target's budget would
    // at its default size: drafts only ever cover the running sequences.
    auto so = spec_options(sf, *(*files)->tokenizer, options.threads, options.ctx_size, options.kv_types);
    if (!so) return so.status();
    options.spec = std::move(*so);
    auto served = std::make_shared<ServedModel>();
    served->spec = spec;
    served->model = std::move((*files)->model);
    served->tokenizer = std::move((*files)->tokenizer);
    served->chat_template = std::move(*chat_template);
    auto engine = Engine::start(*served->model, *served->tokenizer, options);
    if (!engine) return engine.status();
    served->engine = std::move(*engine);
    served->grammars = std::make_unique<GrammarCache>(served->engine->grammar_vocabulary(), grammar_cache_bytes);
    return ServedModelPtr(std::move(served));
}

}  // namespace

Expected<std::vector<ModelSpec>> startup_model_specs(const ServeModelFlags& flags, const SpecFlags& spec) {
    std::vector<ModelSpec> specs;
    for (const std::string& arg : flags.models) {
        auto s = model_arg_spec(arg);
        if (!s) return s.status();
        s->chat_template = flags.chat_template;
        s->draft_model = spec.draft_model;
        specs.push_back(std::move(*s));
    }
    if (!flags.served_names.empty()) {
        if (specs.empty()) return Status::error("--served-model-name names the first --model; there is none");
        specs.front().name = flags.served_names.front();
        specs.front().aliases.assign(flags.served_names.begin() + 1, flags.served_names.end());
        for (const std::string& n : flags.served_names) {
            if (Status st = check_model_name(n); !st.ok()) return Status::error("--served-model-name: a name " + st.message());
        }
    }
    if (!flags.models_file.empty()) {
        auto more = models_file_specs(flags.models_file);
        if (!more) return more.status();
        specs.insert(specs.end(), more->begin(), more->end());
    }
    if (specs.empty()) return Status::error("no model: give --model FILE or --models-file FILE");
    return specs;
}

ModelLoader serve_model_loader(const EngineOptions& engine, const SpecFlags& spec, size_t grammar_cache_bytes) {
    return [engine, spec, grammar_cache_bytes](const ModelSpec& s) {
        return load_served_model(engine, spec, grammar_cache_bytes, s);
    };
}

}  // namespace tessera
