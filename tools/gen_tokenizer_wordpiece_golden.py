#!/usr/bin/env python3
# Generates tests/golden/tokenizer_wordpiece.jsonl: a small WordPiece
# vocabulary in GGUF spelling and the ids Hugging Face `tokenizers` gives
# 1,000 strings with it, for tessera's WordPiece ("bert") tokenizer test.
"""Golden token ids for WordPiece (BERT) tokenization.

The vocabulary is trained with `tokenizers`' WordPieceTrainer (BertNormalizer
with lowercasing and accent stripping, BertPreTokenizer) on the corpus of
gen_tokenizer_golden.py without its long strings. The reference tokenizer is
that same HF WordPiece model (max_input_chars_per_word raised so long words
are matched as llama.cpp matches them). The first line holds the vocabulary as
llama.cpp's converter writes it to GGUF: word-initial pieces prefixed with
U+2581, continuation pieces without their "##", special tokens as they are
(listed as control tokens). Each further line: {"text", "ids"}, encoded
without special tokens.

Usage: tools/gen_tokenizer_wordpiece_golden.py [OUT] [--seed 28] [--n 1000]
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_tokenizer_golden import gen_corpus  # noqa: E402

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
EXTRA = ["Héllo WORLD déjà vu", "naïve café résumé", "ÅNGSTRÖM Ωmega", "tab\there\u0007bell\u200bzero",
         "你好世界hello", "don't stop!!!", "e\u0301te\u0301", "\ufffdx\u0000y", "ａｂｃ ＡＢＣ", "x" * 150]


def main():
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", default="tests/golden/tokenizer_wordpiece.jsonl")
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--n", type=int, default=1000)
    args = ap.parse_args()

    generated = [t for c, t in gen_corpus(args.seed, args.n + 200) if c != "long"]
    corpus = EXTRA + generated[: args.n - len(EXTRA)]

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=1_000_000))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=2500, special_tokens=SPECIALS, show_progress=False)
    tok.train_from_iterator(generated, trainer)
    # Training resets the model's options; rebuild it with the learnt vocabulary.
    vocab = tok.get_vocab()
    tok.model = models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=1_000_000)

    by_id = sorted(vocab.items(), key=lambda kv: kv[1])
    tokens = []
    for text, _ in by_id:
        if text in SPECIALS:
            tokens.append(text)
        elif text.startswith("##"):
            tokens.append(text[2:])
        else:
            tokens.append("\u2581" + text)
    header = {"meta": {"script": "tools/gen_tokenizer_wordpiece_golden.py", "seed": args.seed,
                       "reference": "hf-tokenizers WordPiece"},
              "tokens": tokens, "control": [vocab[s] for s in SPECIALS], "unk": vocab["[UNK]"]}
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(header, ensure_ascii=False) + "\n")
        for text in corpus:
            ids = tok.encode(text, add_special_tokens=False).ids
            f.write(json.dumps({"text": text, "ids": ids}, ensure_ascii=False) + "\n")
    print(f"wrote {len(corpus)} cases and {len(tokens)} tokens to {args.out}")


if __name__ == "__main__":
    main()
