// The chat template a model ships (or the ChatML fallback) together with the
// bos/eos token strings templates refer to, read from GGUF metadata.
#pragma once

#include <string>

#include "core/status.h"
#include "gguf/gguf_file.h"

namespace tessera {

struct ModelChatTemplate {
    std::string source;
    std::string bos;
    std::string eos;
    std::string warning;  // non-empty when the ChatML fallback is used
};

Expected<ModelChatTemplate> chat_template_from_gguf(const GgufFile& file);

}  // namespace tessera
