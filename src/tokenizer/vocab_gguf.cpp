// Vocab::from_gguf: maps tokenizer.ggml.* metadata onto a VocabSpec with the
// defaults llama.cpp applies per tokenizer model, then validates it.
#include "gguf/gguf_file.h"
#include "tokenizer/pre_families.h"
#include "tokenizer/vocab.h"

namespace tessera {

namespace {

// An optional token id key. Missing: `fallback` (dropped if it does not fit
// the vocabulary, as a default must not make a small vocabulary invalid).
Status read_id(const GgufFile& g, std::string_view key, int64_t fallback, size_t n_tokens,
               int64_t* out) {
    if (g.find(key) == nullptr) {
        *out = (fallback >= 0 && static_cast<uint64_t>(fallback) < n_tokens) ? fallback : kNoToken;
        return ok_status();
    }
    auto v = g.get_uint(key);
    if (!v) return v.status();
    if (*v >= n_tokens) {
        return Status::error("tokenizer: " + std::string(key) + " = " + std::to_string(*v) +
                             " is outside the vocabulary of " + std::to_string(n_tokens) +
                             " tokens");
    }
    *out = static_cast<int64_t>(*v);
    return ok_status();
}

Status read_bool(const GgufFile& g, std::string_view key, bool fallback, bool* out) {
    auto v = g.get_bool_or(key, fallback);
    if (!v) return v.status();
    *out = *v;
    return ok_status();
}

Status read_arrays(const GgufFile& g, VocabSpec* s) {
    auto tokens = g.get_string_array("tokenizer.ggml.tokens");
    if (!tokens) return tokens.status();
    s->tokens = std::move(*tokens);
    if (g.find("tokenizer.ggml.scores") != nullptr) {
        auto scores = g.get_float_array("tokenizer.ggml.scores");
        if (!scores) return scores.status();
        s->scores.assign(scores->begin(), scores->end());
    }
    if (g.find("tokenizer.ggml.token_type") != nullptr) {
        auto types = g.get_int_array("tokenizer.ggml.token_type");
        if (!types) return types.status();
        s->types.reserve(types->size());
        for (int64_t t : *types) {
            // Out-of-range values become -1, which validation rejects.
            s->types.push_back((t >= 0 && t <= 6) ? static_cast<int32_t>(t) : -1);
        }
    }
    if (s->kind == VocabKind::Bpe && g.find("tokenizer.ggml.merges") != nullptr) {
        auto merges = g.get_string_array("tokenizer.ggml.merges");
        if (!merges) return merges.status();
        s->merges = std::move(*merges);
    }
    return ok_status();
}

Status read_special_ids(const GgufFile& g, VocabSpec* s) {
    const size_t n = s->tokens.size();
    const bool spm = s->kind == VocabKind::Spm;
    if (s->kind == VocabKind::Ugm) {
        // T5: no BOS; </s>=1 ends a sequence, <unk>=2, <pad>=0 (llama.cpp's defaults).
        TS_RETURN_IF_ERROR(read_id(g, "tokenizer.ggml.bos_token_id", kNoToken, n, &s->bos));
        TS_RETURN_IF_ERROR(read_id(g, "tokenizer.ggml.eos_token_id", 1, n, &s->eos));
        TS_RETURN_IF_ERROR(read_id(g, "tokenizer.ggml.unknown_token_id", 2, n, &s->unk));
        TS_RETURN_IF_ERROR(read_id(g, "tokenizer.ggml.padding_token_id", 0, n, &s->pad));
        return ok_status();
    }
    if (s->kind == VocabKind::Wpm) {
        // BERT: [CLS] (cls_token_id) starts and [SEP] (seperator_token_id, as
        // GGUF spells it) ends a sequence; llama.cpp's defaults 101, 102, 100, 0.
        TS_RETURN_IF_ERROR(read_id(g, "tokenizer.ggml.cls_token_id", 101, n, &s->bos));
        TS_RETURN_IF_ERROR(read_id(g, "tokenizer.ggml.seperator_token_id", 102, n, &s->eos));
        TS_RETURN_IF_ERROR(read_id(g, "tokenizer.ggml.unknown_token_id", 100, n, &s->unk));
        TS_RETURN_IF_ERROR(read_id(g, "tokenizer.ggml.padding_token_id", 0, n, &s->pad));
        return ok_status();
    }
    // llama.cpp's defaults: SentencePiece <unk>=0 <s>=1 </s>=2; GPT-2 BPE 11.
    TS_RETURN_IF_ERROR(read_id(g, "tokenizer.ggml.bos_token_id", spm ? 1 : 11, n, &s->bos));
    TS_RETURN_IF_ERROR(read_id(g, "tokenizer.ggml.eos_token_id", spm ? 2 : 11, n, &s->eos));
    TS_RETURN_IF_ERROR(read_id(g, "tokenizer.ggml.eot_token_id", kNoToken, n, &s->eot));
    TS_RETURN_IF_ERROR(read_id(g, "tokenizer.ggml.eom_token_id", kNoToken, n, &s->eom));
    TS_RETURN_IF_ERROR(read_id(g, "tokenizer.ggml.unknown_token_id", spm ? 0 : kNoToken, n, &s->unk));
    TS_RETURN_IF_ERROR(read_id(g, "tokenizer.ggml.padding_token_id", kNoToken, n, &s->pad));
    return ok_status();
}

// tokenizer.ggml.precompiled_charsmap: an array of (u)int8, kept as bytes.
Status read_charsmap(const GgufFile& g, std::string* out) {
    if (g.find("tokenizer.ggml.precompiled_charsmap") == nullptr) return ok_status();
    auto bytes = g.get_int_array("tokenizer.ggml.precompiled_charsmap");
    if (!bytes) return bytes.status();
    out->reserve(bytes->size());
    for (int64_t b : *bytes) out->push_back(static_cast<char>(static_cast<uint8_t>(b)));
    return ok_status();
}

}  // namespace

Expected<Vocab> Vocab::from_gguf(const GgufFile& g) {
    auto model = g.get_string("tokenizer.ggml.model");
    if (!model) return model.status();
    VocabSpec s;
    if (*model == "llama") {
        s.kind = VocabKind::Spm;
    } else if (*model == "gpt2") {
        s.kind = VocabKind::Bpe;
    } else if (*model == "bert") {
        s.kind = VocabKind::Wpm;
    } else if (*model == "t5") {
        s.kind = VocabKind::Ugm;
    } else if (*model == "gemma4") {
        s.kind = VocabKind::Bpe;  // over raw UTF-8: the "gemma4" pre-tokenizer family
    } else {
        return Status::error("tokenizer: unsupported tokenizer.ggml.model '" + *model +
                             "' (supported: llama, gpt2, gemma4, bert, t5)");
    }
    auto pre = g.get_string_or("tokenizer.ggml.pre", "default");
    if (!pre) return pre.status();
    s.pre = *model == "gemma4" ? "gemma4" : *pre;  // llama.cpp ignores the key for gemma4
    TS_RETURN_IF_ERROR(read_arrays(g, &s));
    if (s.tokens.empty()) return Status::error("tokenizer: tokenizer.ggml.tokens is empty");
    TS_RETURN_IF_ERROR(read_special_ids(g, &s));
    const bool spm = s.kind == VocabKind::Spm;
    const bool wpm = s.kind == VocabKind::Wpm;
    // Only byte-level BPE reads tokenizer.ggml.pre; the others ignore it, as llama.cpp does.
    const PreFamily* family = s.kind == VocabKind::Bpe ? find_pre_family(s.pre) : nullptr;
    // WordPiece adds [CLS] before and [SEP] after (bos and eos here).
    const bool bos_default = spm || wpm || (family != nullptr && family->add_bos);
    TS_RETURN_IF_ERROR(read_bool(g, "tokenizer.ggml.add_bos_token", bos_default, &s.add_bos));
    if (family != nullptr && family->family == "gemma4") s.add_bos = true;  // llama.cpp overrides it for Gemma 4
    const bool ugm = s.kind == VocabKind::Ugm;
    TS_RETURN_IF_ERROR(read_bool(g, "tokenizer.ggml.add_eos_token", wpm || ugm, &s.add_eos));
    TS_RETURN_IF_ERROR(read_bool(g, "tokenizer.ggml.add_space_prefix", spm, &s.add_space_prefix));
    // llama.cpp: BERT lowercases unless the key says otherwise, and strips
    // accents exactly when lowercasing unless that key says otherwise.
    TS_RETURN_IF_ERROR(read_bool(g, "tokenizer.ggml.normalizer.lowercase", true, &s.lowercase));
    TS_RETURN_IF_ERROR(read_bool(g, "tokenizer.ggml.normalizer.strip_accents", s.lowercase, &s.strip_accents));
    TS_RETURN_IF_ERROR(read_bool(g, "tokenizer.ggml.remove_extra_whitespaces", false, &s.remove_extra_whitespaces));
    if (ugm) TS_RETURN_IF_ERROR(read_charsmap(g, &s.charsmap));
    return Vocab::create(std::move(s));
}

}  // namespace tessera
