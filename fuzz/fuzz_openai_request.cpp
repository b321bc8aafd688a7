// libFuzzer target: an arbitrary HTTP body through the server's request layer
// (JSON parse with the depth limit, then chat, completion or Responses API
// validation, the chat template and tokenization) with the GPT-2 fixture
// vocabulary; a structured-output field's grammar is compiled and then run
// over the body's own bytes. The first byte picks the route: bit 2 set is an
// embeddings body, else bit 1 set a Responses body (translated to a chat body
// first), else bit 0 picks completion over chat.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "gguf/gguf_file.h"
#include "grammar/matcher.h"
#include "server/embeddings_request.h"
#include "server/field_reader.h"
#include "server/openai_request.h"
#include "server/responses_api.h"
#include "template/chat_render.h"

namespace {

struct Fixture {
    tessera::Tokenizer tokenizer;
    tessera::ChatTemplate chat_template{tessera::chatml_template(), "<|endoftext|>", "<|endoftext|>"};
};

Fixture load_fixture() {
    const std::string path = TESSERA_SOURCE_DIR "/../shared/fixtures/vocab/ggml-vocab-gpt-2.gguf";
    auto file = tessera::GgufFile::open(path);
    auto tok = file ? tessera::Tokenizer::from_gguf(*file) : tessera::Expected<tessera::Tokenizer>(file.status());
    if (!tok) {
        std::fprintf(stderr, "fuzz_openai_request: cannot load %s: %s\n", path.c_str(), tok.error().c_str());
        std::abort();
    }
    return Fixture{std::move(*tok)};
}

const Fixture& fixture() {
    static const Fixture f = load_fixture();  // libFuzzer gives no context pointer
    return f;
}

// An embeddings body: an accepted one must be what the engine can run.
int fuzz_embeddings(const tessera::Json& body, const tessera::Tokenizer& tok) {
    const tessera::EmbeddingsContext ctx{&tok, 256, 32, tessera::RequestLimits{}};
    tessera::EmbeddingsRequest out;
    if (auto err = tessera::parse_embeddings_request(body, ctx, out)) {
        if (err->http_status != 400 || err->message.empty()) std::abort();
        return 0;
    }
    if (out.inputs.empty() || out.inputs.size() > ctx.limits.max_embedding_inputs) std::abort();
    int64_t total = 0;
    for (const auto& ids : out.inputs) {
        if (ids.empty() || static_cast<int64_t>(ids.size()) > ctx.max_context) std::abort();
        for (int32_t id : ids) {
            if (id < 0 || id >= tok.n_vocab()) std::abort();
        }
        total += static_cast<int64_t>(ids.size());
    }
    if (total != out.n_tokens || total > ctx.limits.max_embedding_tokens) std::abort();
    return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const Fixture& fx = fixture();
    const tessera::ProtocolLimits limits;
    tessera::Json body;
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    if (tessera::parse_json_object(text, limits.max_json_depth, body)) return 0;
    if (data[0] & 4) return fuzz_embeddings(body, fx.tokenizer);
    const tessera::PromptContext ctx{&fx.tokenizer, &fx.chat_template, 256, tessera::RequestLimits{}};
    tessera::ParsedRequest out;
    std::optional<tessera::ApiError> err;
    if (data[0] & 2) {
        tessera::Json chat;
        err = tessera::responses_to_chat_body(body, chat);
        if (!err) err = tessera::parse_chat_request(chat, ctx, limits, out);
    } else {
        err = (data[0] & 1) ? tessera::parse_completion_request(body, ctx, limits, out)
                            : tessera::parse_chat_request(body, ctx, limits, out);
    }
    if (err) {
        if (err->http_status < 400 || err->http_status >= 500 || err->message.empty()) std::abort();
        return 0;
    }
    // An accepted request must be one the engine can run.
    const auto n_prompt = static_cast<int64_t>(out.gen.prompt.size());
    if (n_prompt < 1 || out.gen.max_tokens < 1 || n_prompt + out.gen.max_tokens > ctx.max_context) std::abort();
    // The engine checks limits and sampling consistency once, on submit; the
    // parser's field ranges must never let through what it would refuse.
    if (!ctx.limits.check(out.gen).ok() || !out.gen.sampling.validate(fx.tokenizer.n_vocab()).ok()) std::abort();
    for (int32_t id : out.gen.prompt) {
        if (id < 0 || id >= fx.tokenizer.n_vocab()) std::abort();
    }
    // A compiled constraint (response_format, guided_*, grammar, json_schema)
    // must be one a matcher can run: feed it the body's first bytes.
    if (out.gen.constraint) {
        tessera::GrammarMatcher m(out.gen.constraint.grammar);
        for (char c : text.substr(0, 256)) {
            if (!m.advance(static_cast<uint8_t>(c))) break;
        }
    }
    return 0;
}
