// Reads tokenizer.chat_template and the bos/eos token texts from GGUF.
#include "template/model_chat_template.h"

#include "template/chat_render.h"

namespace tessera {
namespace {

// The text of special token `key` (an id into tokenizer.ggml.tokens); empty when absent.
Expected<std::string> token_text(const GgufFile& file, const std::vector<std::string>& tokens, const char* key) {
    if (!file.find(key)) return std::string();
    auto id = file.get_uint(key);
    if (!id) return id.status();
    if (*id >= tokens.size()) return Status::error(std::string(key) + " is out of range of the vocabulary");
    return tokens[*id];
}

}  // namespace

Expected<ModelChatTemplate> chat_template_from_gguf(const GgufFile& file) {
    auto source = file.get_string_or("tokenizer.chat_template", "");
    if (!source) return source.status();
    ModelChatTemplate out;
    ChatTemplateChoice choice = choose_chat_template(*source);
    out.source = std::move(choice.source);
    out.warning = std::move(choice.warning);
    if (!file.find("tokenizer.ggml.tokens")) return out;
    auto tokens = file.get_string_array("tokenizer.ggml.tokens");
    if (!tokens) return tokens.status();
    TS_ASSIGN_OR_RETURN(out.bos, token_text(file, *tokens, "tokenizer.ggml.bos_token_id"));
    TS_ASSIGN_OR_RETURN(out.eos, token_text(file, *tokens, "tokenizer.ggml.eos_token_id"));
    return out;
}

}  // namespace tessera
