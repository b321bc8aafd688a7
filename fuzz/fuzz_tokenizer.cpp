// libFuzzer target: encode arbitrary bytes with each vocabulary type (GPT-2
// byte-level BPE and Llama SentencePiece from shared/fixtures/vocab), and
// decode the same bytes read as token ids, whole and incrementally.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf_file.h"
#include "tokenizer/detokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace {

std::vector<tessera::Tokenizer> load_tokenizers() {
    const std::string dir = TESSERA_SOURCE_DIR "/../shared/fixtures/vocab/";
    std::vector<tessera::Tokenizer> out;
    for (const char* name : {"ggml-vocab-gpt-2.gguf", "ggml-vocab-llama-spm.gguf"}) {
        auto file = tessera::GgufFile::open(dir + name);
        auto tok = file ? tessera::Tokenizer::from_gguf(*file) : tessera::Expected<tessera::Tokenizer>(file.status());
        if (!tok) {
            std::fprintf(stderr, "fuzz_tokenizer: cannot load %s: %s\n", name, tok.error().c_str());
            std::abort();
        }
        out.push_back(std::move(*tok));
    }
    return out;
}

const std::vector<tessera::Tokenizer>& tokenizers() {
    static const std::vector<tessera::Tokenizer> all = load_tokenizers();  // libFuzzer gives no context pointer
    return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const uint8_t flags = data[0];
    const tessera::Tokenizer& tok = tokenizers()[flags % tokenizers().size()];
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    const std::vector<int32_t> ids =
        tok.encode(text, {.add_special = (flags & 2) != 0, .parse_special = (flags & 4) != 0});
    for (int32_t id : ids) {
        if (id < 0 || id >= tok.n_vocab()) std::abort();  // encode must only produce vocabulary ids
    }
    (void)tok.decode(ids);

    // The same bytes as raw ids, in and out of range.
    std::vector<int32_t> raw((size - 1) / 4);
    if (!raw.empty()) std::memcpy(raw.data(), data + 1, raw.size() * 4);
    const bool render_special = (flags & 8) != 0;
    const std::string whole = tok.decode(raw, {.render_special = render_special});
    tessera::IncrementalDetokenizer detok(tok, {.render_special = render_special, .sequence_start = (flags & 16) != 0});
    std::string streamed;
    for (int32_t id : raw) streamed += detok.push(id);
    streamed += detok.flush();
    // Streaming never emits broken UTF-8; where the whole text is valid and the
    // stream starts the text as decode() does, the two agree byte for byte.
    if (!tessera::utf8_is_valid(streamed)) std::abort();
    if ((flags & 16) != 0 && tessera::utf8_is_valid(whole) && whole != streamed) std::abort();
    return 0;
}
