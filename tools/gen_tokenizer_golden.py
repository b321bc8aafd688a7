#!/usr/bin/env python3
# Generates tests/golden/tokenizer/*.jsonl: a seeded corpus of test strings and
# the token ids a reference tokenizer gives them, for tessera's tokenizer tests.
"""Golden token ids for a byte-level BPE GGUF vocabulary.

The corpus is generated from a fixed seed (English, CJK, Cyrillic, Arabic,
emoji, code, whitespace runs, digits, mixed scripts, long inputs, contractions,
special-token-looking text). Each string is tokenized without added special
tokens and without parsing special-token text.

Reference tokenizers (--reference):
  llama_cpp  llama.cpp through llama-cpp-python:
             Llama(model, vocab_only=True).tokenize(text.encode(), add_bos=False, special=False)
  hf         Hugging Face `tokenizers`, built from the GGUF's own tokens and merges:
             a BPE model with the pre-tokenizer chain llama.cpp uses for
             tokenizer.ggml.pre (Split regexes, then ByteLevel without regex).
  auto       llama_cpp if importable, else hf.
The output's first line records which one was used.

Usage: tools/gen_tokenizer_golden.py MODEL.gguf OUT.jsonl [--reference auto] [--seed 1234] [--n 2400]
"""

import argparse
import json
import random
import sys

GPT2_PATTERN = (r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+")
LLAMA3_PATTERN = (r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|"
                  r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_PATTERN = LLAMA3_PATTERN.replace(r"\p{N}{1,3}", r"\p{N}")

# Regex chains per tokenizer.ggml.pre, in the order llama.cpp applies them.
PRE_CHAINS = {
    "gpt-2": [GPT2_PATTERN],
    "smollm": [r"\p{N}", GPT2_PATTERN],
    "llama-bpe": [LLAMA3_PATTERN],
    "qwen2": [QWEN2_PATTERN],
}

ENGLISH = ("the quick brown fox jumps over lazy dog tokenizer inference engine server request "
           "model weights cache prefix batch stream hello world please answer question about "
           "history science music coffee morning evening running swimming wonderful").split()
CONTRACTIONS = ["don't", "I'm", "you're", "we've", "she'll", "he'd", "it's", "DON'T", "I'M",
                "You'RE", "We'Ve", "isn't", "y'all", "rock'n'roll", "it’s", "can’t", "'s", "'ll"]
CYRILLIC = "привет мир как дела хорошо спасибо Москва Россия язык программирование ёжик".split()
ARABIC = "مرحبا بالعالم كيف حالك شكرا اللغة العربية برمجة كتاب".split()
CJK_WORDS = ["你好世界", "机器学习", "自然语言处理", "こんにちは", "東京タワー", "ありがとうございます",
             "안녕하세요", "한국어", "漢字かなカナ", "中文，标点。", "「引用」", "全角　空白"]
EMOJI = ["😀", "🚀", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "❤️", "🤖", "✨", "🏳️‍🌈", "🧑🏿‍💻", "☕", "🙂🙃"]
CODE = ["def f(x):\n    return x ** 2\n", "for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}",
        "if x != None and y >= 3:", "SELECT * FROM users WHERE id = 42;", "<div class=\"a\">hi</div>",
        "const std::string& s = v[0];", "x = {'a': [1, 2, 3], \"b\": None}", "#include <stdio.h>",
        "    if (a && b || !c) { return -1; }", "$ ls -la | grep '.cpp' > out.txt 2>&1",
        "fn main() -> Result<(), Box<dyn Error>> {}", "λx.x + 1 // comment /* block */"]
SPECIAL_LOOKING = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "</s>", "<s>", "[INST]",
                   "<|im_start|>user\nhi<|im_end|>", "<repo_name>", "<file_sep>", "<|eot_id|>",
                   "<unk>", "<|im_start", "im_end|>", "<<|im_start|>>"]
WHITESPACE = [" ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n ", "\t\t", "\u00a0", "\u3000",
              "\u2003", "\u0085", " \u00a0 ", "\n\n\n\n", "    ", "\u2028", "\u200b", "\f", "\v"]
PUNCT = list(".,;:!?-()[]{}\"'/\\@#$%^&*_+=~`|<>") + ["...", "—", "–", "…", "«", "»", "¿", "¡", "·"]

# Code point ranges to draw random characters from, per script.
RANGES = {
    "latin": [(0x41, 0x5A), (0x61, 0x7A), (0xC0, 0xFF), (0x100, 0x17F)],
    "cjk": [(0x4E00, 0x9FFF), (0x3040, 0x309F), (0x30A0, 0x30FF), (0xAC00, 0xD7A3)],
    "cyrillic": [(0x410, 0x44F)],
    "arabic": [(0x621, 0x64A)],
    "greek": [(0x391, 0x3A9), (0x3B1, 0x3C9)],
    "emoji": [(0x1F600, 0x1F64F), (0x1F300, 0x1F5FF), (0x1F900, 0x1F9FF)],
    "digits": [(0x30, 0x39), (0x660, 0x669), (0xFF10, 0xFF19), (0xB2, 0xB3), (0xBD, 0xBD)],
    "symbols": [(0x2190, 0x21FF), (0x2200, 0x22FF), (0x20A0, 0x20BF)],
}


def rand_chars(rng, script, n):
    out = []
    for _ in range(n):
        lo, hi = rng.choice(RANGES[script])
        out.append(chr(rng.randint(lo, hi)))
    return "".join(out)


def rand_number(rng):
    kind = rng.randrange(5)
    if kind == 0:
        return str(rng.randint(0, 10 ** rng.randint(1, 12)))
    if kind == 1:
        return f"{rng.uniform(-1e6, 1e6):.{rng.randint(0, 6)}f}"
    if kind == 2:
        return "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 30)))
    if kind == 3:
        return f"{rng.randint(1, 12)}/{rng.randint(1, 28)}/{rng.randint(1900, 2100)}"
    return f"{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}"


def rand_ws(rng):
    return "".join(rng.choice(WHITESPACE) for _ in range(rng.randint(1, 4)))


def sentence(rng, words, sep=" "):
    return sep.join(rng.choice(words) for _ in range(rng.randint(1, 12)))


def gen_english(rng):
    s = sentence(rng, ENGLISH)
    if rng.random() < 0.5:
        s = s.capitalize() + rng.choice([".", "!", "?", ",", ""])
    if rng.random() < 0.3:
        s = s.upper()
    return (" " if rng.random() < 0.3 else "") + s


def gen_piece(rng, category):
    makers = {
        "english": lambda: gen_english(rng),
        "contractions": lambda: " ".join(rng.choice(CONTRACTIONS + ENGLISH) for _ in range(rng.randint(1, 8))),
        "cjk": lambda: rng.choice(["", " "]).join(rng.choice(CJK_WORDS + [rand_chars(rng, "cjk", rng.randint(1, 10))])
                                               for _ in range(rng.randint(1, 5))),
        "cyrillic": lambda: sentence(rng, CYRILLIC + [rand_chars(rng, "cyrillic", 6)]),
        "arabic": lambda: sentence(rng, ARABIC + [rand_chars(rng, "arabic", 5)]),
        "emoji": lambda: "".join(rng.choice(EMOJI + [rand_chars(rng, "emoji", 1), " ", "a"]) for _ in range(rng.randint(1, 8))),
        "code": lambda: rng.choice(CODE) if rng.random() < 0.6 else "".join(rng.choice(CODE) for _ in range(3)),
        "whitespace": lambda: rand_ws(rng).join(rng.choice(ENGLISH + ["", "x", "1"]) for _ in range(rng.randint(1, 6))),
        "digits": lambda: rng.choice([" ", "", ", ", "x", "$", "-"]).join(rand_number(rng) for _ in range(rng.randint(1, 5))),
        "special": lambda: rng.choice(["", " ", "\n"]).join(rng.choice(SPECIAL_LOOKING + ENGLISH) for _ in range(rng.randint(1, 6))),
        "symbols": lambda: "".join(rng.choice(PUNCT + [rand_chars(rng, "symbols", 1)]) for _ in range(rng.randint(1, 10))),
        "greek": lambda: rand_chars(rng, "greek", rng.randint(1, 15)),
    }
    return makers[category]()


CATEGORIES = ["english", "contractions", "cjk", "cyrillic", "arabic", "emoji", "code", "whitespace",
              "digits", "special", "symbols", "greek"]


def gen_mixed(rng):
    parts = [gen_piece(rng, rng.choice(CATEGORIES)) for _ in range(rng.randint(2, 6))]
    return "".join(p + (rng.choice(["", " ", "\n", rand_ws(rng)]) if rng.random() < 0.7 else "") for p in parts)


def gen_long(rng):
    target = rng.randint(2000, 8000)
    parts = []
    size = 0
    while size < target:
        p = gen_mixed(rng) if rng.random() < 0.7 else gen_english(rng)
        parts.append(p)
        size += len(p)
    return " ".join(parts)


def gen_corpus(seed, n):
    rng = random.Random(seed)
    corpus = [("edge", s) for s in ["", " ", "  ", "\n", "a", "1", "12345678901234567890", "'", "'s",
                                    " 's", "Hello world", " Hello world", "\t\tx", "a" * 1000,
                                    " " * 500, "1" * 300, "😀" * 50, "\n" * 40 + "x"]]
    per_category = (n - len(corpus)) // (len(CATEGORIES) + 2)
    for cat in CATEGORIES:
        corpus += [(cat, gen_piece(rng, cat)) for _ in range(per_category)]
    corpus += [("mixed", gen_mixed(rng)) for _ in range(per_category)]
    corpus += [("long", gen_long(rng)) for _ in range(max(12, per_category // 10))]
    while len(corpus) < n:
        corpus.append(("mixed", gen_mixed(rng)))
    return corpus


def hf_tokenizer(model_path):
    from gguf import GGUFReader
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    reader = GGUFReader(model_path)

    def field(name):
        f = reader.fields.get(name)
        return None if f is None else f.contents()

    if field("tokenizer.ggml.model") != "gpt2":
        sys.exit("the hf reference only supports byte-level BPE (tokenizer.ggml.model = gpt2)")
    pre = field("tokenizer.ggml.pre") or "default"
    if pre not in PRE_CHAINS:
        sys.exit(f"no hf pre-tokenizer chain for tokenizer.ggml.pre = {pre}")
    tokens = field("tokenizer.ggml.tokens")
    vocab = {}
    for i, t in enumerate(tokens):
        vocab[t] = i  # the last of repeated texts wins, as in llama.cpp
    merges = [tuple(m.split(" ", 1)) for m in field("tokenizer.ggml.merges")]
    tok = Tokenizer(models.BPE(vocab, merges, ignore_merges=(pre == "llama-bpe")))
    splits = [pre_tokenizers.Split(Regex(p), behavior="isolated") for p in PRE_CHAINS[pre]]
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        splits + [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    return lambda text: tok.encode(text, add_special_tokens=False).ids


def llama_cpp_tokenizer(model_path):
    from llama_cpp import Llama

    llm = Llama(model_path=model_path, vocab_only=True, verbose=False)
    return lambda text: llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--reference", choices=["auto", "llama_cpp", "hf"], default="auto")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--n", type=int, default=2400)
    args = ap.parse_args()

    reference = args.reference
    if reference == "auto":
        try:
            import llama_cpp  # noqa: F401
            reference = "llama_cpp"
        except ImportError:
            reference = "hf"
    tokenize = llama_cpp_tokenizer(args.model) if reference == "llama_cpp" else hf_tokenizer(args.model)

    corpus = gen_corpus(args.seed, args.n)
    with open(args.out, "w", encoding="utf-8") as f:
        meta = {"reference": reference, "model": args.model.rsplit("/", 1)[-1], "seed": args.seed,
                "n": len(corpus), "add_special": False, "parse_special": False,
                "script": "tools/gen_tokenizer_golden.py"}
        f.write(json.dumps({"meta": meta}, ensure_ascii=False) + "\n")
        for category, text in corpus:
            f.write(json.dumps({"category": category, "text": text, "ids": tokenize(text)},
                               ensure_ascii=False) + "\n")
    print(f"wrote {len(corpus)} cases to {args.out} (reference: {reference})")


if __name__ == "__main__":
    main()
