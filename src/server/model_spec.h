// What a served model is asked to be: its names, its file and its per-model
// options (KV budget, draft model, chat template), from `--model`, a models
// file or POST /admin/models. Both JSON forms are untrusted and checked here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "server/json_util.h"

namespace tessera {

struct ModelSpec {
    std::string name;                  // the name requests route by (the first of its names)
    std::string path;                  // the GGUF file
    std::vector<std::string> aliases;  // further names for the same model
    std::optional<int64_t> ctx_size;   // KV tokens; unset: the server's --ctx-size
    std::optional<int64_t> kv_memory;  // KV bytes; unset: the server's --kv-memory
    std::string draft_model;           // speculative decoding draft; empty: the server's flags
    std::string chat_template;         // a Jinja file or built-in name; empty: the model's own

    // The name followed by the aliases.
    std::vector<std::string> names() const;
};

// Limits of a models file and of one entry.
inline constexpr size_t kMaxModelsFileBytes = size_t{1} << 20;
inline constexpr size_t kMaxModelNameBytes = 256;
inline constexpr size_t kMaxAliases = 16;

// A served name: 1..256 bytes, no control characters or whitespace.
Status check_model_name(std::string_view name);

// One entry: an object of {name, path, aliases?, ctx_size?, kv_memory?,
// draft_model?, chat_template?}; any other field is an error. kv_memory is a
// byte count or a string such as "512M" (K, M, G, T: powers of 1024).
Expected<ModelSpec> parse_model_spec(const Json& entry);

// A models file: a JSON list of entries (or an object {"models": [...]}),
// at least one, names unique across the file. Errors name the entry.
Expected<std::vector<ModelSpec>> parse_models_file(std::string_view text);

// The JSON form of a spec (GET /admin/models), unset options left out.
Json model_spec_json(const ModelSpec& spec);

}  // namespace tessera
