// Validation of POST /v1/embeddings bodies (embeddings_request.h).
#include "server/embeddings_request.h"

#include <bit>
#include <cstring>

#include "server/field_reader.h"

namespace tessera {
namespace {

constexpr const char* kInputShape =
    "'input' must be a non-empty string, a list of strings, a list of token ids, or a list of lists of token ids";

std::optional<ApiError> token_list(const Json& ids, const EmbeddingsContext& ctx, std::vector<int32_t>& out) {
    if (!ids.is_array() || ids.empty()) return bad_request("input", kInputShape);
    out.reserve(ids.size());
    for (const Json& id : ids) {
        const auto v = json_to_int(id, 0, ctx.tokenizer->n_vocab() - 1);
        if (!v) {
            return bad_request("input", "token ids must be integers in [0, " +
                                            std::to_string(ctx.tokenizer->n_vocab()) + ")");
        }
        out.push_back(static_cast<int32_t>(*v));
    }
    return std::nullopt;
}

std::optional<ApiError> text_tokens(const Json& text, const EmbeddingsContext& ctx, std::vector<int32_t>& out) {
    const std::string& s = text.get_ref<const std::string&>();
    if (s.empty()) return bad_request("input", "an input string is empty");
    // Refused before encoding: a text that cannot fit costs no tokenizer time.
    if (static_cast<int64_t>(ctx.tokenizer->min_tokens_for_bytes(s.size())) > ctx.max_context) {
        return bad_request("input", "an input is longer than this model's context (" +
                                        std::to_string(ctx.max_context) + " tokens)");
    }
    // Special-token text is read as text (a user's "<|im_end|>" is not a
    // control token); BOS/EOS where the vocabulary asks, as llama.cpp does.
    out = ctx.tokenizer->encode(s, {.add_special = true});
    if (out.empty()) return bad_request("input", "an input string encodes to no tokens");
    return std::nullopt;
}

// Splits `input` into its items, each a string or a list of token ids.
std::optional<ApiError> input_items(const Json& input, std::vector<const Json*>& items) {
    if (input.is_string()) {
        items.push_back(&input);
        return std::nullopt;
    }
    if (!input.is_array() || input.empty()) return bad_request("input", kInputShape);
    if (input[0].is_number()) {
        items.push_back(&input);  // one list of token ids
        return std::nullopt;
    }
    const bool strings = input[0].is_string();
    for (const Json& item : input) {
        if (strings ? !item.is_string() : !item.is_array()) return bad_request("input", kInputShape);
        items.push_back(&item);
    }
    return std::nullopt;
}

}  // namespace

std::optional<ApiError> parse_embeddings_request(const Json& body, const EmbeddingsContext& ctx,
                                                 EmbeddingsRequest& out) {
    FieldReader r(body);
    r.string("model", out.model);
    std::string format = "float";
    r.string("encoding_format", format);
    int64_t dimensions = ctx.n_embd;
    r.integer("dimensions", 1, INT32_MAX, dimensions);
    std::string user;
    r.string("user", user);  // accepted and unused, as by other OpenAI-compatible servers
    if (!r.ok()) return r.error();
    if (format != "float" && format != "base64") {
        return bad_request("encoding_format", "'encoding_format' must be \"float\" or \"base64\"");
    }
    out.base64 = format == "base64";
    // GGUF says nothing of Matryoshka training, and truncating other models'
    // vectors spoils them, so like vLLM for such models only the full size.
    if (dimensions != ctx.n_embd) {
        return bad_request("dimensions", "this model's embeddings have " + std::to_string(ctx.n_embd) +
                                             " dimensions and cannot be shortened");
    }
    const Json* input = r.find("input");
    if (input == nullptr) return bad_request("input", "'input' is required");
    std::vector<const Json*> items;
    if (auto err = input_items(*input, items)) return err;
    if (items.size() > ctx.limits.max_embedding_inputs) {
        return bad_request("input", "at most " + std::to_string(ctx.limits.max_embedding_inputs) +
                                        " inputs are allowed per request");
    }
    out.inputs.resize(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
        auto err = items[i]->is_string() ? text_tokens(*items[i], ctx, out.inputs[i])
                                         : token_list(*items[i], ctx, out.inputs[i]);
        if (err) return err;
        const auto n = static_cast<int64_t>(out.inputs[i].size());
        if (n > ctx.max_context) {
            return bad_request("input", "input " + std::to_string(i) + " is " + std::to_string(n) +
                                            " tokens; this model's context is " + std::to_string(ctx.max_context));
        }
        out.n_tokens += n;
        if (out.n_tokens > ctx.limits.max_embedding_tokens) {
            return bad_request("input", "the inputs have more than " +
                                            std::to_string(ctx.limits.max_embedding_tokens) +
                                            " tokens together; split them over several requests");
        }
    }
    return std::nullopt;
}

std::string embedding_base64(const std::vector<float>& v) {
    static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    static_assert(std::endian::native == std::endian::little, "float32 bytes are sent little-endian");
    std::string bytes(v.size() * sizeof(float), '\0');
    if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (size_t i = 0; i < bytes.size(); i += 3) {
        const size_t n = std::min<size_t>(3, bytes.size() - i);
        uint32_t chunk = 0;
        for (size_t k = 0; k < 3; ++k) {
            chunk = (chunk << 8) | (k < n ? static_cast<uint8_t>(bytes[i + k]) : 0u);
        }
        for (size_t k = 0; k < 4; ++k) out += k <= n ? kAlphabet[(chunk >> (18 - 6 * k)) & 63] : '=';
    }
    return out;
}

}  // namespace tessera
