// How `tessera serve` turns flags into served models: the startup list from
// repeated --model (NAME=PATH or a file), --served-model-name and
// --models-file, and the loader the server calls for each (also at run time,
// from POST /admin/models), which applies the server's flags as defaults.
#pragma once

#include <string>
#include <vector>

#include "cli/spec_flags.h"
#include "engine/engine.h"
#include "server/model_registry.h"

namespace tessera {

struct ServeModelFlags {
    std::vector<std::string> models;       // --model, repeatable: PATH or NAME=PATH
    std::vector<std::string> served_names;  // --served-model-name: the first model's names
    std::string models_file;               // --models-file
    std::string chat_template;             // --chat-template, for the --model models
};

// The startup models in order: --model ones, then the models file's. Errors
// name the flag or file and the entry.
Expected<std::vector<ModelSpec>> startup_model_specs(const ServeModelFlags& flags, const SpecFlags& spec);

// Loads a spec: weights, tokenizer, chat template (compiled), then an engine
// with `engine` as defaults (ctx_size / kv_memory per spec) and speculation
// from `spec` (draft_model per spec), and a grammar cache of
// `grammar_cache_bytes`. Warnings go to stderr.
ModelLoader serve_model_loader(const EngineOptions& engine, const SpecFlags& spec, size_t grammar_cache_bytes);

}  // namespace tessera
