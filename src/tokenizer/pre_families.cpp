// The pre-tokenizer family table (see pre_families.h). Patterns are the
// models' own splitting expressions (their tokenizer.json), written for PCRE2,
// which supports the Unicode classes and lookarounds they use directly; the
// names and flags follow llama.cpp's llama-vocab so a GGUF means the same here.
// Where llama.cpp rewrites an expression for std::regex (GPT-4o and Tekken's
// cased words, Kimi K2's class intersection) the original meaning is kept, as
// Hugging Face `tokenizers` applies it. Not here: gemma4, sarvam-moe and
// whitespace, which are BPE over raw UTF-8 rather than byte-level BPE.
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
constexpr Sv kCjk = R"re([一-龥ࠀ-一가-퟿]+)re";
constexpr Sv kCjkKana = R"re([一-龥぀-ゟ゠-ヿ]+)re";
constexpr Sv kDigits3 = R"re(\p{N}{1,3})re";
constexpr Sv kDigit = R"re(\p{N})re";
constexpr Sv kNewline = R"re([\r\n])re";
constexpr Sv kBloom = R"re( ?[^(\s|.,!?…。，、।۔،)]+)re";

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
    Sv(R"re(\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+)re"),
    Sv(R"re(\s?[!-/:-~！-／：-～‘-‟　-。]+)re"),
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
    Sv(R"re([가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+)re"),
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
    Sv(R"re([一-鿿㐀-䶿豈-﫿぀-ゟ゠-ヿ･-ﾟ⼀-⿟เ-๿຀-໿ក-៿က-႟ꩠ-ꩿꧠ-꧿가-힯ᄀ-ᇿ]+)re"),
    Sv(R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re")};
constexpr std::array kMiniCpm5Chain = {
    kDigits3,
    Sv(R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re")};

struct Entry {
    Sv names;  // every tokenizer.ggml.pre spelling, space-separated
    PreFamily family;
};

// One row per distinct (chain, flags); names as llama.cpp spells them.
constexpr std::array<Entry, 31> kTable = {{
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
