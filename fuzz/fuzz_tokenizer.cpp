// libFuzzer target: encode arbitrary bytes with each vocabulary type (GPT-2
// byte-level BPE and Llama SentencePiece from shared/fixtures/vocab; every
// pre-tokenizer family, WordPiece and Unigram with its charsmap from the
// committed goldens), and decode the same bytes read as token ids, whole and
// incrementally.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gguf/gguf_file.h"
#include "tokenizer/detokenizer.h"
#include "tokenizer/pre_families.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace {

void add_or_abort(std::vector<tessera::Tokenizer>& out, tessera::Expected<tessera::Tokenizer> tok,
                  const std::string& what) {
    if (!tok) {
        std::fprintf(stderr, "fuzz_tokenizer: cannot load %s: %s\n", what.c_str(), tok.error().c_str());
        std::abort();
    }
    out.push_back(std::move(*tok));
}

tessera::Expected<tessera::Tokenizer> from_spec(tessera::VocabSpec spec) {
    auto vocab = tessera::Vocab::create(std::move(spec));
    if (!vocab) return vocab.status();
    return tessera::Tokenizer::from_vocab(std::move(*vocab));
}

nlohmann::json golden_head(const std::string& file) {
    std::ifstream f(TESSERA_SOURCE_DIR "/tests/golden/" + file);
    std::string line;
    std::getline(f, line);
    return nlohmann::json::parse(line);
}

std::string base64_decode(const std::string& in) {
    std::string out;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : in) {
        const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const char* at = c == '\0' ? nullptr : std::strchr(digits, c);
        if (at == nullptr) continue;
        acc = (acc << 6) | static_cast<uint32_t>(at - digits);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((acc >> bits) & 0xFF));
        }
    }
    return out;
}

std::vector<tessera::Tokenizer> load_tokenizers() {
    const std::string dir = TESSERA_SOURCE_DIR "/../shared/fixtures/vocab/";
    std::vector<tessera::Tokenizer> out;
    for (const char* name : {"ggml-vocab-gpt-2.gguf", "ggml-vocab-llama-spm.gguf"}) {
        auto file = tessera::GgufFile::open(dir + name);
        if (!file) add_or_abort(out, file.status(), name);
        add_or_abort(out, tessera::Tokenizer::from_gguf(*file), name);
    }
    // One small byte-level BPE vocabulary under every pre-tokenizer name.
    std::ifstream vf(TESSERA_SOURCE_DIR "/tests/golden/tokenizer_families/vocab.json");
    const auto bpe = nlohmann::json::parse(vf);
    for (std::string_view pre : tessera::known_pre_names()) {
        tessera::VocabSpec s;
        s.pre = std::string(pre);
        s.tokens = bpe.at("tokens").get<std::vector<std::string>>();
        s.merges = bpe.at("merges").get<std::vector<std::string>>();
        add_or_abort(out, from_spec(std::move(s)), std::string(pre));
    }
    const auto wpm = golden_head("tokenizer_wordpiece.jsonl");
    tessera::VocabSpec w;
    w.kind = tessera::VocabKind::Wpm;
    w.tokens = wpm.at("tokens").get<std::vector<std::string>>();
    w.unk = wpm.at("unk").get<int32_t>();
    add_or_abort(out, from_spec(std::move(w)), "wordpiece");
    const auto ugm = golden_head("tokenizer_unigram.jsonl");
    tessera::VocabSpec u;
    u.kind = tessera::VocabKind::Ugm;
    u.tokens = ugm.at("tokens").get<std::vector<std::string>>();
    u.scores = ugm.at("scores").get<std::vector<float>>();
    u.types = ugm.at("types").get<std::vector<int32_t>>();
    u.unk = ugm.at("unk").get<int32_t>();
    u.charsmap = base64_decode(ugm.at("charsmap").get<std::string>());
    u.add_space_prefix = true;
    u.remove_extra_whitespaces = true;
    add_or_abort(out, from_spec(std::move(u)), "unigram");
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
