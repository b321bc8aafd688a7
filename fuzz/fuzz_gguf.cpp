// libFuzzer target: an arbitrary byte string as a GGUF file, then everything a
// model load reads from it (config, weight views, vocabulary, chat template),
// and a short encode/decode with the tokenizer when one loads.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "model/model_config.h"
#include "model/model_weights.h"
#include "template/model_chat_template.h"
#include "tokenizer/tokenizer.h"

namespace {

void exercise_tokenizer(const tessera::GgufFile& file) {
    auto tok = tessera::Tokenizer::from_gguf(file);
    if (!tok) return;
    const std::vector<int32_t> ids =
        tok->encode("Hello world, <|im_start|>x\xff", {.add_special = true, .parse_special = true});
    (void)tok->decode(ids, {.render_special = true});
    for (int32_t id : {-1, 0, tok->n_vocab() - 1, tok->n_vocab()}) {
        (void)tok->token_to_piece(id, {.render_special = true});
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto file = tessera::GgufFile::parse(data, size);
    if (!file) return 0;
    if (auto cfg = tessera::ModelConfig::from_gguf(*file)) (void)tessera::ModelWeights::bind(*file, *cfg);
    exercise_tokenizer(*file);
    (void)tessera::chat_template_from_gguf(*file);
    return 0;
}
