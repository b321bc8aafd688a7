// Finding the one constraint field a request may carry, checking its shape,
// and compiling it with the server's grammar limits.
#include "server/constraint_request.h"

#include <chrono>
#include <string>
#include <vector>

#include "grammar/gbnf.h"
#include "grammar/json_schema.h"
#include "grammar/regex.h"
#include "server/field_reader.h"

namespace tessera {
namespace {

enum class Kind { JsonSchema, JsonObject, Gbnf, Choice, Regex };

struct Found {
    std::string param;            // the field, as a client would name it
    Kind kind = Kind::JsonObject;
    const Json* value = nullptr;  // the schema, grammar text or choice list; null for JsonObject
};

std::optional<ApiError> read_response_format(const Json& rf, std::vector<Found>& out) {
    if (!rf.is_object()) return bad_request("response_format", "'response_format' must be an object");
    const auto type = rf.find("type");
    if (type == rf.end() || !type->is_string()) {
        return bad_request("response_format.type",
                           "'response_format.type' must be one of text, json_object, json_schema");
    }
    const std::string& t = type->get_ref<const std::string&>();
    if (t == "text") return std::nullopt;
    if (t == "json_object") {
        // llama-server and vLLM also take a schema here.
        const auto schema = rf.find("schema");
        if (schema != rf.end() && !schema->is_null()) {
            out.push_back({"response_format.schema", Kind::JsonSchema, &*schema});
        } else {
            out.push_back({"response_format", Kind::JsonObject, nullptr});
        }
        return std::nullopt;
    }
    if (t != "json_schema") {
        return bad_request("response_format.type", "'response_format.type' must be one of text, json_object, "
                                                   "json_schema; got '" + t + "'");
    }
    const auto js = rf.find("json_schema");
    if (js == rf.end() || !js->is_object()) {
        return bad_request("response_format.json_schema", "'response_format.json_schema' must be an object "
                                                          "with a 'schema'");
    }
    FieldReader r(*js);
    std::string name;
    bool strict = false;  // the schema is enforced either way: decoding cannot leave it
    r.string("name", name);
    r.boolean("strict", strict);
    if (!r.ok()) return bad_request("response_format.json_schema", r.error()->message);
    const Json* schema = r.find("schema");
    if (!schema) {
        return bad_request("response_format.json_schema.schema", "'response_format.json_schema.schema' is required");
    }
    out.push_back({"response_format.json_schema.schema", Kind::JsonSchema, schema});
    return std::nullopt;
}

std::optional<ApiError> find_constraints(const Json& body, std::vector<Found>& out) {
    FieldReader r(body);
    if (const Json* rf = r.find("response_format")) {
        if (auto err = read_response_format(*rf, out)) return err;
    }
    for (const char* key : {"guided_json", "json_schema"}) {
        if (const Json* v = r.find(key)) out.push_back({key, Kind::JsonSchema, v});
    }
    for (const char* key : {"guided_grammar", "grammar"}) {
        const Json* v = r.find(key);
        if (!v) continue;
        if (!v->is_string()) return bad_request(key, std::string("'") + key + "' must be a string of GBNF rules");
        if (v->get_ref<const std::string&>().empty()) continue;  // llama-server: "" means no grammar
        out.push_back({key, Kind::Gbnf, v});
    }
    if (const Json* v = r.find("guided_choice")) out.push_back({"guided_choice", Kind::Choice, v});
    if (const Json* v = r.find("guided_regex")) {
        if (!v->is_string()) return bad_request("guided_regex", "'guided_regex' must be a string");
        out.push_back({"guided_regex", Kind::Regex, v});
    }
    if (out.size() > 1) {
        return bad_request(out[1].param, "At most one of response_format (json_object / json_schema), guided_json, "
                                         "guided_grammar, guided_choice, guided_regex, grammar and json_schema may "
                                         "be given; got '" + out[0].param + "' and '" + out[1].param + "'");
    }
    return std::nullopt;
}

// The schema's text: a JSON string is taken as the schema's source (vLLM
// accepts both), an object or boolean is serialized in its key order.
std::optional<ApiError> schema_text(const Found& f, const ProtocolLimits& limits, std::string& out) {
    if (f.value->is_string()) {
        out = f.value->get<std::string>();
        if (json_nesting_exceeds(out, limits.max_json_depth)) {
            return bad_request(f.param, "The schema nests deeper than " + std::to_string(limits.max_json_depth) +
                                            " levels");
        }
        return std::nullopt;
    }
    if (!f.value->is_object() && !f.value->is_boolean()) {
        return bad_request(f.param, "'" + f.param + "' must be a JSON Schema (an object)");
    }
    out = dump_json(*f.value);
    return std::nullopt;
}

std::optional<ApiError> read_choices(const Found& f, std::vector<std::string>& out) {
    if (!f.value->is_array() || f.value->empty()) {
        return bad_request(f.param, "'guided_choice' must be a non-empty list of strings");
    }
    for (const Json& c : *f.value) {
        if (!c.is_string()) return bad_request(f.param, "'guided_choice' must be a non-empty list of strings");
        out.push_back(c.get<std::string>());
    }
    return std::nullopt;
}

const char* describe(Kind kind) {
    switch (kind) {
        case Kind::JsonSchema: return "JSON Schema";
        case Kind::Choice: return "choice list";
        case Kind::Regex: return "regular expression";
        case Kind::JsonObject:
        case Kind::Gbnf: break;
    }
    return "grammar";
}

// Compiles the constraint into `out`, through the cache when there is one,
// keyed by the kind and the text the grammar is compiled from.
std::optional<ApiError> compile(const Found& f, const ProtocolLimits& limits, GrammarCache* grammars,
                                GenerationConstraint& out) {
    std::string schema;
    std::vector<std::string> choices;
    if (f.kind == Kind::JsonSchema) {
        if (auto err = schema_text(f, limits, schema)) return err;
    }
    if (f.kind == Kind::Choice) {
        if (auto err = read_choices(f, choices)) return err;
    }
    const GrammarCache::Compile make = [&]() -> Expected<Grammar> {
        switch (f.kind) {
            case Kind::JsonObject: return json_object_grammar();
            case Kind::JsonSchema: return compile_json_schema(schema, limits.grammar);
            case Kind::Gbnf: return parse_gbnf(f.value->get_ref<const std::string&>(), limits.grammar);
            case Kind::Regex: return compile_regex(f.value->get_ref<const std::string&>(), limits.grammar);
            case Kind::Choice: break;
        }
        return choice_grammar(choices, limits.grammar);
    };
    const auto failed = [&](const std::string& why) {
        return bad_request(f.param, std::string("Invalid ") + describe(f.kind) + " in '" + f.param + "': " + why);
    };
    if (!grammars) {
        Expected<Grammar> g = make();
        if (!g.ok()) return failed(g.error());
        out.grammar = std::make_shared<const Grammar>(std::move(*g));
        return std::nullopt;
    }
    const std::string key = std::to_string(static_cast<int>(f.kind)) + "\n" +
                            (f.kind == Kind::JsonSchema ? schema
                             : f.kind == Kind::Choice   ? dump_json(*f.value)
                             : f.value                  ? f.value->get<std::string>()
                                                        : std::string());
    auto compiled = grammars->get(key, make, std::chrono::duration<double>(limits.grammar.table_build_seconds));
    if (!compiled.ok()) return failed(compiled.error());
    out.grammar = compiled->grammar;
    out.tables = compiled->tables;
    return std::nullopt;
}

}  // namespace

Expected<Grammar> choice_grammar(const std::vector<std::string>& choices, const GrammarLimits& limits) {
    size_t total = 0;
    for (const std::string& c : choices) total += c.size();
    if (total > limits.max_source_bytes) {
        return Status::error("the choices hold " + std::to_string(total) + " bytes; the limit is " +
                             std::to_string(limits.max_source_bytes));
    }
    GrammarBuilder b(limits);
    const uint32_t root = b.rule("root");
    for (const std::string& c : choices) {
        std::vector<GrammarSymbol> symbols;
        b.append_literal(c, symbols);
        TS_RETURN_IF_ERROR(b.add_alternative(root, std::move(symbols)));
    }
    return b.build("root");
}

std::optional<ApiError> read_constraint(const Json& body, const ProtocolLimits& limits, GrammarCache* grammars,
                                        GenerationConstraint& out) {
    std::vector<Found> found;
    if (auto err = find_constraints(body, found)) return err;
    if (found.empty()) return std::nullopt;
    const auto start = std::chrono::steady_clock::now();
    if (auto err = compile(found.front(), limits, grammars, out)) return err;
    out.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::nullopt;
}

}  // namespace tessera
