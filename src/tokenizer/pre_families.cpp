// The pre-tokenizer family table (see pre_families.h). Patterns are the
// models' own splitting expressions (their tokenizer.json), written for PCRE2,
// which supports the Unicode classes and lookarounds they use directly; the
// names and flags follow llama.cpp's llama-vocab so a GGUF means the same here.
// Where llama.cpp rewrites an expression for std::regex (GPT-4o and Tekken's
// cased words, Kimi K2's class intersection) the original meaning is kept, as
// Hugging Face `tokenizers` applies it. Gemma 4's family is BPE over raw
// UTF-8 (byte_level = false); not here: whitespace (jina-v2-zh's split on
// whitespace with raw UTF-8 and no space escaping).
#include "tokenizer/pre_families.h"

#include <algorithm>
#include <array>
#include <vector>

namespace tessera {

namespace {

using Sv = std::string_view;

// Building blocks shared by several families.
constexpr Sv kGpt2 = R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))re";
constexpr Sv kLlama3 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr Sv kQwen2 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
// Cased words (an upper run, then a lower run) as in GPT-4o / Tekken, with
// the contraction suffix GPT-4o allows.
constexpr Sv kGpt4o =
    R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr Sv kCjk = R"re([\x{4E00}-\x{9FA5}\x{800}-\x{4E00}\x{AC00}-\x{D7FF}]+)re";
constexpr Sv kCjkKana = R"re([\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+)re";
constexpr Sv kDigits3 = R"re(\p{N}{1,3})re";
constexpr Sv kDigit = R"re(\p{N})re";
constexpr Sv kNewline = R"re([\r\n])re";
constexpr Sv kBloom = R"re( ?[^(\s|.,!?\x{2026}\x{3002}\x{FF0C}\x{3001}\x{964}\x{6D4}\x{60C})]+)re";

constexpr std::array kDefaultChain = {Sv(R"re([\p{P}\$\+<=>\^~\|]+)re"), kGpt2, Sv(R"re(\p{N}+)re"),
                                      Sv("[0-9][0-9][0-9]")};
constexpr std::array kFalconChain = {Sv(R"re([\p{P}\$\+<=>\^~\|`]+)re"), kGpt2, Sv("[0-9][0-9][0-9]")};
constexpr std::array kGpt2Chain = {kGpt2};
constexpr std::array kStarcoderChain = {kDigit, kGpt2};
constexpr std::array kLlama3Chain = {kLlama3};
constexpr std::array kQwen2Chain = {kQwen2};
constexpr std::array kQwen35Chain = {Sv(
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re")};
// Jais 2: Llama 3's expression with whitespace runs cut at powers of two.
constexpr std::array kJais2Chain = {Sv(
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1})re")};
// DeepSeek LLM spells its letter class out as ranges.
constexpr std::array kDeepseekLlmChain = {
    kNewline,
    Sv(R"re(\s?[A-Za-z\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293}\x{295}-\x{2AF}\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A}\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5}\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556}\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF}\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D}\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D}\x{1F5F}-\x{1F7D}\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4}\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4}\x{1FF6}-\x{1FFC}\x{2102}\x{2107}\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124}\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F}\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4}\x{2CEB}-\x{2CEE}\x{2CF2}\x{2CF3}\x{A640}-\x{A66D}\x{A680}-\x{A69B}\x{A722}-\x{A76F}\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF}\x{FB00}-\x{FB06}\x{FB13}-\x{FB17}\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F}\x{104B0}-\x{104D3}\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2}\x{118A0}-\x{118DF}\x{1E900}-\x{1E943}]+)re"),
    Sv(R"re(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+)re"),
    Sv(R"re(\s+$)re"),
    kCjk,
    Sv(R"re(\p{N}+)re"),
};
constexpr std::array kDeepseekCoderChain = {kNewline, Sv(R"re(\s?\p{L}+)re"), Sv(R"re(\s?\p{P}+)re"), kCjk,
                                            kDigit};
constexpr std::array kDeepseekV3Chain = {
    kDigits3, kCjkKana,
    Sv(R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re")};
constexpr std::array kSpark25Chain = {
    kDigits3, kCjkKana,
    Sv(R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+|[\r\n]|\s+(?!\S)|\s+)re"),
    kDigit};
constexpr std::array kYoutuChain = {
    Sv(R"re([\x{AC00}-\x{D7A3}\x{3131}-\x{318E}]+|[\x{FF01}\x{2026}\x{201C}\x{201D}\x{2018}\x{2019}\x{2014}\x{FF1A}\x{FF1B}\x{FF0C}\x{3001}-\x{303F}\x{FE30}-\x{FE4F}]+|[\x{3105}-\x{312F}]+|[\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+)re"),
    Sv(R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re")};
constexpr std::array kBloomChain = {kBloom};
constexpr std::array kVikingChain = {kBloom, kDigit};
constexpr std::array kTekkenChain = {Sv(
    R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re")};
// Chameleon isolates its sentinel and image-token spellings first.
constexpr std::array kChameleonChain = {
    Sv("<sentinel:[0-9]+>"), Sv("(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z"), Sv("([\\t\\n]|    |  )"), kDigit,
    Sv(R"re([\p{P}!-/:-@\[-`{-~])re"), kGpt2};
constexpr std::array kGpt4oChain = {kGpt4o};
// Granite multilingual embeddings: GPT-4o's shape with marks counted as letters.
constexpr std::array kGraniteEmbMultiChain = {Sv(
    R"re([^\r\n\p{L}\p{N}]?(?:(?=[\p{L}\p{M}])[^a-z])*(?:(?=[\p{L}\p{M}])[^A-Z])+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?(?:(?=[\p{L}\p{M}])[^a-z])+(?:(?=[\p{L}\p{M}])[^A-Z])*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re")};
// Tiny Aya groups digits in threes from the right before GPT-4o's split.
constexpr std::array kTinyAyaChain = {Sv(R"re(\d{1,3}(?=(?:\d{3})*\b))re"), kGpt4o};
// Kimi K2: Han runs on their own, and no Han character inside cased words
// (tiktoken's class intersection, written as a lookahead for PCRE2).
constexpr std::array kKimiK2Chain = {Sv(
    R"re(\p{Han}+|[^\r\n\p{L}\p{N}]?(?:(?!\p{Han})[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}])*(?:(?!\p{Han})[\p{Ll}\p{Lm}\p{Lo}\p{M}])+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?(?:(?!\p{Han})[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}])+(?:(?!\p{Han})[\p{Ll}\p{Lm}\p{Lo}\p{M}])*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re")};
// BailingMoE's expression keeps its possessive quantifiers (PCRE2 has them).
constexpr std::array kBailingMoeChain = {Sv(
    R"re('(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)re")};
constexpr std::array kSeedCoderChain = {Sv(
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)re")};
// Qwen 2's expression without contractions, so Turkish suffixes stay attached.
constexpr std::array kUfakzekaChain = {
    Sv(R"re([^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re")};
constexpr std::array kLagunaChain = {Sv(R"re([^\n]+|[\n]+)re"), kQwen2};
constexpr std::array kExaoneMoeChain = {Sv(
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+)re")};
// SuperBPE: digit runs, then an empty lookahead match that cuts each run
// into threes from the right (1234567 -> 1 234 567).
constexpr std::array kSuperBpeChain = {Sv(R"re(\p{N}+)re"), Sv(R"re((?=(\d{3})+(?!\d)))re")};
// AFMoE: digit runs grouped in threes from the right, CJK and other Asian
// scripts as runs, then DeepSeek V3's expression.
constexpr std::array kAfmoeChain = {
    Sv(R"re(\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N})))re"),
    Sv(R"re([\x{4E00}-\x{9FFF}\x{3400}-\x{4DBF}\x{8C48}-\x{FAFF}\x{3040}-\x{309F}\x{30A0}-\x{30FF}\x{FF65}-\x{FF9F}\x{2F00}-\x{2FDF}\x{E40}-\x{E7F}\x{E80}-\x{EFF}\x{1780}-\x{17FF}\x{1000}-\x{109F}\x{AA60}-\x{AA7F}\x{A9E0}-\x{A9FF}\x{AC00}-\x{D7AF}\x{1100}-\x{11FF}]+)re"),
    Sv(R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re")};
// Gemma 4: only newline runs are cut; spaces are U+2581 inside the words.
constexpr std::array kGemma4Chain = {Sv(R"re([^\n]+|[\n]+)re")};
constexpr std::array kMiniCpm5Chain = {
    kDigits3,
    Sv(R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re")};

struct Entry {
    Sv names;  // every tokenizer.ggml.pre spelling, space-separated
    PreFamily family;
};

// One row per distinct (chain, flags); names as llama.cpp spells them.
constexpr std::array<Entry, 33> kTable = {{
    {"default",
     {"default", kDefaultChain}},
    {"falcon",
     {"falcon", kFalconChain}},
    {"gpt-2 phi-2 jina-es jina-de gigachat jina-v2-es jina-v2-de a.x-4.0 mellum modern-bert jina-v1-en jina-v2-code roberta-bpe mpt olmo jais trillion granite-docling exaone4",
     {"gpt-2", kGpt2Chain}},
    {"starcoder refact command-r smollm codeshell exaone minerva-7b mellum2",
     {"starcoder", kStarcoderChain}},
    {"llama3 llama-v3 llama-bpe falcon3 falcon-h1 pixtral midm-2.0 lfm2 jina-v5-nano",
     {"llama3", kLlama3Chain, true, true}},
    {"dbrx smaug-bpe chatglm-bpe",
     {"dbrx", kLlama3Chain}},
    {"glm4 glm5",
     {"glm4", kLlama3Chain, true}},
    {"jais-2",
     {"jais-2", kJais2Chain}},
    {"qwen2 deepseek-r1-qwen kormo f2llmv2 megrez stablelm2 hunyuan solar-open grok-2",
     {"qwen2", kQwen2Chain}},
    {"qwen35",
     {"qwen35", kQwen35Chain}},
    {"deepseek-llm",
     {"deepseek-llm", kDeepseekLlmChain}},
    {"deepseek-coder",
     {"deepseek-coder", kDeepseekCoderChain}},
    {"deepseek-v3 hunyuan-dense joyai-llm hy_v4",
     {"deepseek-v3", kDeepseekV3Chain}},
    {"spark2_5",
     {"spark2_5", kSpark25Chain}},
    {"youtu",
     {"youtu", kYoutuChain, true}},
    {"poro-chat bloom gpt3-finnish",
     {"bloom", kBloomChain}},
    {"viking",
     {"viking", kVikingChain}},
    {"tekken",
     {"tekken", kTekkenChain, true, true}},
    {"chameleon",
     {"chameleon", kChameleonChain, false, true}},
    {"gpt-4o llama4 kanana2 talkie minimax-m2",
     {"gpt-4o", kGpt4oChain}},
    {"granite-embed-multi-97m",
     {"granite-embed-multi", kGraniteEmbMultiChain, true}},
    {"tiny_aya cohere2moe",
     {"tiny_aya", kTinyAyaChain}},
    {"kimi-k2",
     {"kimi-k2", kKimiK2Chain}},
    {"bailingmoe bailingmoe2 llada-moe",
     {"bailingmoe", kBailingMoeChain}},
    {"seed-coder",
     {"seed-coder", kSeedCoderChain}},
    {"ufakzeka",
     {"ufakzeka", kUfakzekaChain}},
    {"laguna",
     {"laguna", kLagunaChain}},
    {"exaone-moe",
     {"exaone-moe", kExaoneMoeChain}},
    {"minicpm5",
     {"minicpm5", kMiniCpm5Chain, true}},
    {"superbpe",
     {"superbpe", kSuperBpeChain}},
    {"afmoe",
     {"afmoe", kAfmoeChain}},
    {"gemma4 granite-embed-multi-311m",
     {"gemma4", kGemma4Chain, false, true, false, true}},
    {"sarvam-moe",
     {"sarvam-moe", kGemma4Chain, false, false, false}},
}};

std::vector<Sv> split_names(Sv names) {
    std::vector<Sv> out;
    for (size_t pos = 0; pos < names.size();) {
        const size_t end = std::min(names.find(' ', pos), names.size());
        out.push_back(names.substr(pos, end - pos));
        pos = end + 1;
    }
    return out;
}

}  // namespace

const PreFamily* find_pre_family(std::string_view pre) {
    for (const Entry& e : kTable) {
        for (Sv name : split_names(e.names)) {
            if (name == pre) return &e.family;
        }
    }
    return nullptr;
}

std::vector<std::string_view> known_pre_names() {
    std::vector<std::string_view> names;
    for (const Entry& e : kTable) {
        for (Sv name : split_names(e.names)) names.push_back(name);
    }
    return names;
}

}  // namespace tessera
