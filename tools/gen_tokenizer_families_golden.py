#!/usr/bin/env python3
# Generates tests/golden/tokenizer_families/: one small byte-level BPE
# vocabulary, one corpus, and per pre-tokenizer family the ids Hugging Face
# `tokenizers` gives each corpus string with that family's regex chain.
"""Golden token ids for every tokenizer.ggml.pre family tessera knows.

The vocabulary (vocab.json: tokens and merges) is trained with `tokenizers`'
BpeTrainer on the corpus, plus whole words added without merges so that the
families that skip merging for in-vocabulary words (ignore_merges) differ
from the others. The corpus (corpus.jsonl) is the seeded generator of
gen_tokenizer_golden.py without its long strings, plus strings aimed at the
families' differences (digit runs, cased words, contractions, Han, marks).

Each family's chain below is written from the model's own tokenizer.json
expression where llama.cpp records it (so `(?i:...)`, class intersections and
possessive quantifiers are kept as the model has them), applied as
Split(Regex, "isolated") steps before ByteLevel(use_regex=False), as llama.cpp
applies its chain. <family>.json lists the tokenizer.ggml.pre names llama.cpp
maps to the family and the ids of every corpus string, encoded without
special tokens.

Usage: tools/gen_tokenizer_families_golden.py [OUT_DIR] [--seed 27] [--n 1000]
"""

import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_tokenizer_golden import gen_corpus  # noqa: E402

CONTRACTIONS_I = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)"
GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
LLAMA3 = CONTRACTIONS_I + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2 = CONTRACTIONS_I + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
UPPER = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"
LOWER = r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"


def cased(digits, tail, contractions=True):
    c = CONTRACTIONS_I + "?" if contractions else ""
    return (rf"[^\r\n\p{{L}}\p{{N}}]?{UPPER}*{LOWER}+{c}|[^\r\n\p{{L}}\p{{N}}]?{UPPER}+{LOWER}*{c}|"
            rf"{digits}| ?[^\s\p{{L}}\p{{N}}]+{tail}|\s*[\r\n]+|\s+(?!\S)|\s+")


GPT4O = cased(r"\p{N}{1,3}", r"[\r\n/]*")
CJK = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"
CJK_KANA = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
DEEPSEEK_V3_MAIN = (r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|"
                    r" ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
BLOOM = " ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+"
NOT_HAN = "&&[^\\p{Han}]"

# family: (tokenizer.ggml.pre names, regex chain, ignore_merges), from
# llama.cpp's llama-vocab.cpp name table.
FAMILIES = {
    "default": (["default"], [r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", "[0-9][0-9][0-9]"], False),
    "falcon": (["falcon"], [r"[\p{P}\$\+<=>\^~\|`]+", GPT2, "[0-9][0-9][0-9]"], False),
    "gpt-2": (["gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
               "mellum", "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe", "mpt", "olmo", "jais",
               "trillion", "granite-docling", "exaone4"], [GPT2], False),
    "starcoder": (["starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b",
                   "mellum2"], [r"\p{N}", GPT2], False),
    "llama3": (["llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
                "jina-v5-nano"], [LLAMA3], True),
    "dbrx": (["dbrx", "smaug-bpe", "chatglm-bpe"], [LLAMA3], False),
    "glm4": (["glm4", "glm5"], [LLAMA3], True),
    "jais-2": (["jais-2"], [CONTRACTIONS_I + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                            r"\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|"
                            r"\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}"], False),
    "qwen2": (["qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2", "hunyuan", "solar-open",
               "grok-2"], [QWEN2], False),
    "qwen35": (["qwen35"], [CONTRACTIONS_I + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|"
                            r"\s*[\r\n]+|\s+(?!\S)|\s+"], False),
    "deepseek-llm": (["deepseek-llm"], [
        "[\r\n]",
        "\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af"
        "\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5"
        "\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba"
        "\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45"
        "\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe"
        "\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc"
        "\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139"
        "\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3"
        "\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06"
        "\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3"
        "\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df"
        "\U0001e900-\U0001e943]+",
        "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+",
        "\\s+$",
        CJK,
        r"\p{N}+"], False),
    "deepseek-coder": (["deepseek-coder"], ["[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", CJK, r"\p{N}"], False),
    "deepseek-v3": (["deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"],
                    [r"\p{N}{1,3}", CJK_KANA, DEEPSEEK_V3_MAIN], False),
    "spark2_5": (["spark2_5"], [r"\p{N}{1,3}", CJK_KANA,
                                DEEPSEEK_V3_MAIN.replace(r"[\r\n]*|\s*[\r\n]+|", r"|[\r\n]|"), r"\p{N}"], False),
    "youtu": (["youtu"], ["[\uac00-\ud7a3\u3131-\u318e]+|[\uff01\u2026\u201c\u201d\u2018\u2019\u2014\uff1a\uff1b"
                          "\uff0c\u3001-\u303f\ufe30-\ufe4f]+|[\u3105-\u312f]+|[\u4e00-\u9fa5\u3040-\u309f"
                          "\u30a0-\u30ff]+", cased(r"\p{N}", r"[\r\n/]*")], True),
    "bloom": (["poro-chat", "bloom", "gpt3-finnish"], [BLOOM], False),
    "viking": (["viking"], [BLOOM, r"\p{N}"], False),
    "tekken": (["tekken"], [cased(r"\p{N}", r"[\r\n/]*", contractions=False)], True),
    "chameleon": (["chameleon"], ["<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )",
                                  r"\p{N}", r"[\p{P}!-/:-@\[-`{-~]", GPT2], False),
    "gpt-4o": (["gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"], [GPT4O], False),
    "granite-embed-multi": (["granite-embed-multi-97m"], [
        r"[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))*((?=[\p{L}\p{M}])([^A-Z]))+" + CONTRACTIONS_I +
        r"?|[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))+((?=[\p{L}\p{M}])([^A-Z]))*" + CONTRACTIONS_I +
        r"?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"], True),
    "tiny_aya": (["tiny_aya", "cohere2moe"], [r"\d{1,3}(?=(?:\d{3})*\b)", GPT4O], False),
    "kimi-k2": (["kimi-k2"], [
        rf"[\p{{Han}}]+|[^\r\n\p{{L}}\p{{N}}]?[\p{{Lu}}\p{{Lt}}\p{{Lm}}\p{{Lo}}\p{{M}}{NOT_HAN}]*"
        rf"[\p{{Ll}}\p{{Lm}}\p{{Lo}}\p{{M}}{NOT_HAN}]+{CONTRACTIONS_I}?|[^\r\n\p{{L}}\p{{N}}]?"
        rf"[\p{{Lu}}\p{{Lt}}\p{{Lm}}\p{{Lo}}\p{{M}}{NOT_HAN}]+[\p{{Ll}}\p{{Lm}}\p{{Lo}}\p{{M}}{NOT_HAN}]*"
        rf"{CONTRACTIONS_I}?|\p{{N}}{{1,3}}| ?[^\s\p{{L}}\p{{N}}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"], False),
    "bailingmoe": (["bailingmoe", "bailingmoe2", "llada-moe"], [
        r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"],
        False),
    "seed-coder": (["seed-coder"], [CONTRACTIONS_I + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|"
                                    r"\s*[\r\n]+|\s+(?!\S)|\s+"], False),
    "ufakzeka": (["ufakzeka"], [r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
                 False),
    "laguna": (["laguna"], ["[^\\n]+|[\\n]+", QWEN2], False),
    "exaone-moe": (["exaone-moe"], [CONTRACTIONS_I + r"|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}|"
                                    r" ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+"], False),
    "minicpm5": (["minicpm5"], [r"\p{N}{1,3}", CONTRACTIONS_I + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+|"
                                r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"], True),
    "superbpe": (["superbpe"], [r"\p{N}+", r"(?=(\d{3})+(?!\d))"], False),
    "afmoe": (["afmoe"], [r"\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))",
                          "[\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff\u3040-\u309f\u30a0-\u30ff\uff65-\uff9f"
                          "\u2f00-\u2fdf\u0e00-\u0e7f\u0e80-\u0eff\u1780-\u17ff\u1000-\u109f\uaa60-\uaa7f"
                          "\ua9e0-\ua9ff\uac00-\ud7af\u1100-\u11ff]+", DEEPSEEK_V3_MAIN], False),
}

# Strings aimed at what tells the families apart.
TARGETED = [
    "1234567", "12345678901", "x1234y", "3.14159", "1,000,000", "٣٤٥٦٧", "１２３４", "½ and ²",
    "HelloWorld", "iPhone XMLHttpRequest camelCase", "ÉCOLE école", "DON'T don't Don'T",
    "l'homme c'est", "it's 'quoted'", "e\u0301te\u0301 cafe\u0301", "नमस्ते दुनिया", "สวัสดีครับ",
    "你好world世界hello", "漢字カタカナ混じり文", "안녕 세상", "<sentinel:12>IMGIMGABZ", "a  b    c\t\td",
    "path/to/file\n/usr", "!!!abc ???def", "word.Word,WORD", "ΑΒΓ αβγ Ωmega ℃ K", "ﬁne ﬀ",
    "x = y+1; // ok", "   \n\n  x", "end   ", "tab\t\n", "a\r\nb\rc", "mixed123abc456",
]


# Words of the corpus that training leaves unmerged, added as whole tokens.
WHOLE_WORDS = [" программирование", " Москва", "ありがとうございます", " مرحبا", "Helloworld", " XMLHttpRequest",
               " école", " camelCase", " iPhone", " cafe\u0301", " Россия", " ёжик", " بالعالم", " العربية"]


def build_corpus(seed, n):
    corpus = [text for category, text in gen_corpus(seed, n + 200) if category != "long"]
    rng = random.Random(seed)
    rng.shuffle(corpus)
    aimed = TARGETED + ["".join(WHOLE_WORDS), "x" + "".join(reversed(WHOLE_WORDS)) + "."]
    return aimed, corpus[: n - len(aimed)]


def train_vocab(corpus):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=3000, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus * 2, trainer)
    model = json.loads(tok.to_str())["model"]
    vocab = sorted(model["vocab"].items(), key=lambda kv: kv[1])
    tokens = [t for t, _ in vocab]
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    # Whole words with no merge path: only ignore_merges families emit them.
    byte_text = {b: c for b, c in zip(range(256), bytes_to_unicode())}
    for word in WHOLE_WORDS:
        t = "".join(byte_text[b] for b in word.encode())
        if t not in tokens:
            tokens.append(t)
    return tokens, merges


def bytes_to_unicode():
    """GPT-2's byte -> printable character table, in byte order."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    table = dict(zip(bs, cs))
    return [chr(table[b]) for b in range(256)]


def family_tokenizer(tokens, merges, chain, ignore_merges):
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    vocab = {t: i for i, t in enumerate(tokens)}
    tok = Tokenizer(models.BPE(vocab, [tuple(m.split(" ", 1)) for m in merges], ignore_merges=ignore_merges))
    splits = [pre_tokenizers.Split(Regex(p), behavior="isolated") for p in chain]
    tok.pre_tokenizer = pre_tokenizers.Sequence(splits + [pre_tokenizers.ByteLevel(add_prefix_space=False,
                                                                                  use_regex=False)])
    return tok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", default="tests/golden/tokenizer_families")
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument("--n", type=int, default=1000)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    aimed, generated = build_corpus(args.seed, args.n)
    tokens, merges = train_vocab(generated)  # the aimed strings stay out of training
    corpus = aimed + generated
    meta = {"script": "tools/gen_tokenizer_families_golden.py", "seed": args.seed, "reference": "hf-tokenizers"}
    with open(os.path.join(args.out, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump({"meta": meta, "tokens": tokens, "merges": merges}, f, ensure_ascii=False)
    with open(os.path.join(args.out, "corpus.jsonl"), "w", encoding="utf-8") as f:
        for text in corpus:
            f.write(json.dumps(text, ensure_ascii=False) + "\n")
    for family, (names, chain, ignore_merges) in FAMILIES.items():
        tok = family_tokenizer(tokens, merges, chain, ignore_merges)
        ids = [tok.encode(text, add_special_tokens=False).ids for text in corpus]
        with open(os.path.join(args.out, family + ".json"), "w", encoding="utf-8") as f:
            f.write(json.dumps({"meta": meta, "family": family, "names": names}, ensure_ascii=False) + "\n")
            for row in ids:
                f.write(json.dumps(row, separators=(",", ":")) + "\n")
    print(f"wrote {len(FAMILIES)} families x {len(corpus)} strings to {args.out}")


if __name__ == "__main__":
    main()
