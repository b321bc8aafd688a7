// Parsing of model specs (models file entries and POST /admin/models bodies):
// every field's type and range checked, unknown fields refused so a typo is
// an error rather than a silently ignored option.
#include "server/model_spec.h"

#include <cctype>
#include <set>

#include "server/field_reader.h"

namespace tessera {
namespace {

constexpr int kMaxDepth = 8;
constexpr int64_t kMinCtx = 16;
constexpr int64_t kMaxCtx = int64_t{1} << 24;
constexpr int64_t kMaxKvBytes = int64_t{1} << 50;  // 1 PiB: beyond any machine, far from overflow
constexpr const char* kFields[] = {"name", "path", "aliases", "ctx_size", "kv_memory", "draft_model", "chat_template"};

Status field_error(const std::string& field, const std::string& why) {
    return Status::error("'" + field + "' " + why);
}

// "512M", "2G", "1048576", "64KiB": a count of bytes, K/M/G/T in powers of 1024.
std::optional<int64_t> parse_size(std::string_view s) {
    size_t digits = 0;
    int64_t value = 0;
    while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) {
        if (value > kMaxKvBytes) return std::nullopt;
        value = value * 10 + (s[digits++] - '0');
    }
    if (digits == 0) return std::nullopt;
    std::string unit;
    for (char c : s.substr(digits)) unit += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (unit.ends_with("IB")) unit.resize(unit.size() - 2);
    else if (unit.ends_with("B")) unit.resize(unit.size() - 1);
    static const std::string kUnits = "KMGT";
    int shift = 0;
    if (unit.size() > 1) return std::nullopt;
    if (unit.size() == 1) {
        const size_t at = kUnits.find(unit[0]);
        if (at == std::string::npos) return std::nullopt;
        shift = 10 * static_cast<int>(at + 1);
    }
    if (value > (kMaxKvBytes >> shift)) return std::nullopt;
    return value << shift;
}

Status read_kv_memory(const Json& v, std::optional<int64_t>& out) {
    std::optional<int64_t> bytes;
    if (v.is_string()) bytes = parse_size(v.get<std::string>());
    else bytes = json_to_int(v, 1, kMaxKvBytes);
    if (!bytes || *bytes <= 0) return field_error("kv_memory", "must be a byte count such as 536870912 or \"512M\"");
    out = *bytes;
    return ok_status();
}

Status read_aliases(const Json& v, std::vector<std::string>& out) {
    if (!v.is_array()) return field_error("aliases", "must be a list of names");
    if (v.size() > kMaxAliases) return field_error("aliases", "has more than " + std::to_string(kMaxAliases) + " names");
    for (const Json& a : v) {
        if (!a.is_string()) return field_error("aliases", "must be a list of names");
        if (Status st = check_model_name(a.get<std::string>()); !st.ok()) return field_error("aliases", st.message());
        out.push_back(a.get<std::string>());
    }
    return ok_status();
}

Status check_fields(const Json& entry) {
    for (auto it = entry.begin(); it != entry.end(); ++it) {
        bool known = false;
        for (const char* f : kFields) known = known || it.key() == f;
        if (!known) return Status::error("unknown field '" + it.key().substr(0, 64) + "'");
    }
    return ok_status();
}

Status read_strings(const Json& entry, ModelSpec& spec) {
    FieldReader r(entry);
    r.string("name", spec.name);
    r.string("path", spec.path);
    r.string("draft_model", spec.draft_model);
    r.string("chat_template", spec.chat_template);
    if (!r.ok()) return Status::error(r.error()->message);
    if (spec.name.empty()) return field_error("name", "is required");
    if (Status st = check_model_name(spec.name); !st.ok()) return field_error("name", st.message());
    if (spec.path.empty()) return field_error("path", "is required (a GGUF file)");
    return ok_status();
}

Status read_numbers(const Json& entry, ModelSpec& spec) {
    if (const auto it = entry.find("ctx_size"); it != entry.end() && !it->is_null()) {
        const auto ctx = json_to_int(*it, kMinCtx, kMaxCtx);
        if (!ctx) {
            return field_error("ctx_size", "must be an integer in [" + std::to_string(kMinCtx) + ", " +
                                               std::to_string(kMaxCtx) + "]");
        }
        spec.ctx_size = *ctx;
    }
    if (const auto it = entry.find("kv_memory"); it != entry.end() && !it->is_null()) {
        return read_kv_memory(*it, spec.kv_memory);
    }
    return ok_status();
}

}  // namespace

std::vector<std::string> ModelSpec::names() const {
    std::vector<std::string> out{name};
    out.insert(out.end(), aliases.begin(), aliases.end());
    return out;
}

Status check_model_name(std::string_view name) {
    if (name.empty() || name.size() > kMaxModelNameBytes) {
        return Status::error("must be 1 to " + std::to_string(kMaxModelNameBytes) + " bytes");
    }
    for (char c : name) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u == 0x7f) return Status::error("must not hold spaces or control characters");
    }
    return ok_status();
}

Expected<ModelSpec> parse_model_spec(const Json& entry) {
    if (!entry.is_object()) return Status::error("a model must be a JSON object with 'name' and 'path'");
    ModelSpec spec;
    if (Status st = check_fields(entry); !st.ok()) return st;
    if (Status st = read_strings(entry, spec); !st.ok()) return st;
    if (Status st = read_numbers(entry, spec); !st.ok()) return st;
    if (const auto it = entry.find("aliases"); it != entry.end() && !it->is_null()) {
        if (Status st = read_aliases(*it, spec.aliases); !st.ok()) return st;
    }
    return spec;
}

Expected<std::vector<ModelSpec>> parse_models_file(std::string_view text) {
    if (text.size() > kMaxModelsFileBytes) return Status::error("larger than 1 MiB");
    if (json_nesting_exceeds(text, kMaxDepth)) return Status::error("nested deeper than " + std::to_string(kMaxDepth));
    const std::optional<Json> doc = parse_json(text);
    if (!doc) return Status::error("not valid JSON");
    const Json* list = &*doc;
    if (doc->is_object() && doc->size() == 1 && doc->contains("models")) list = &(*doc)["models"];
    if (!list->is_array() || list->empty()) return Status::error("must be a non-empty JSON list of models");
    std::vector<ModelSpec> specs;
    std::set<std::string> seen;
    for (size_t i = 0; i < list->size(); ++i) {
        auto spec = parse_model_spec((*list)[i]);
        const std::string where = "model " + std::to_string(i + 1) + ": ";
        if (!spec) return Status::error(where + spec.error());
        for (const std::string& n : spec->names()) {
            if (!seen.insert(n).second) return Status::error(where + "the name '" + n + "' is used twice");
        }
        specs.push_back(std::move(*spec));
    }
    return specs;
}

Json model_spec_json(const ModelSpec& spec) {
    Json j = {{"name", spec.name}, {"path", spec.path}, {"aliases", spec.aliases}};
    if (spec.ctx_size) j["ctx_size"] = *spec.ctx_size;
    if (spec.kv_memory) j["kv_memory"] = *spec.kv_memory;
    if (!spec.draft_model.empty()) j["draft_model"] = spec.draft_model;
    if (!spec.chat_template.empty()) j["chat_template"] = spec.chat_template;
    return j;
}

}  // namespace tessera
