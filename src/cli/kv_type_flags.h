// The KV cache storage flags shared by run, chat, serve and bench: --kv-type
// sets K and V together; --cache-type-k / --cache-type-v (llama.cpp's long
// names for -ctk/-ctv) set one each, e.g. q8_0 keys with f16 values.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "tensor/kv_type.h"

namespace tessera {

inline constexpr const char* kSwaFullHelp =
    "sliding-window layers keep the whole context's KV (default: only their window's, in a pool of their own)";

inline void add_kv_type_flags(CLI::App& app, KvTypes& types) {
    const CLI::Validator valid(
        [](std::string& s) { return parse_kv_type(s) ? std::string() : "must be f32, f16, bf16 or q8_0"; },
        "f32|f16|bf16|q8_0");
    const std::string fallback = " (default " + kv_type_name(types.k) + ")";
    auto* both = app.add_option_function<std::string>(
                        "--kv-type", [&types](const std::string& s) { types.k = types.v = *parse_kv_type(s); },
                        "KV cache storage type of K and V" + fallback)
                     ->check(valid);
    app.add_option_function<std::string>(
           "--cache-type-k", [&types](const std::string& s) { types.k = *parse_kv_type(s); },
           "KV cache storage type of K" + fallback)
        ->check(valid)
        ->excludes(both);
    app.add_option_function<std::string>(
           "--cache-type-v", [&types](const std::string& s) { types.v = *parse_kv_type(s); },
           "KV cache storage type of V" + fallback)
        ->check(valid)
        ->excludes(both);
}

}  // namespace tessera
