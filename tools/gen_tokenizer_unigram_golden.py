#!/usr/bin/env python3
# Generates tests/golden/tokenizer_unigram.jsonl: a small T5-style SentencePiece
# Unigram vocabulary (pieces, scores, types, the nmt_nfkc precompiled charsmap)
# and the ids SentencePiece gives 1,000 strings, for tessera's Unigram ("t5") tokenizer test.
"""Golden token ids for SentencePiece Unigram (T5-style) tokenization.

The model is trained with the `sentencepiece` package (PyPI; a tool
dependency only) as T5's was: unigram, nmt_nfkc normalisation (its
precompiled charsmap is what GGUF stores as tokenizer.ggml.precompiled_charsmap),
a dummy space prefix, extra whitespace removed, plus two user-defined symbols.
Reference ids come from Hugging Face `tokenizers` built from the same pieces
and scores: Unigram (its Viterbi sums scores in double precision, as llama.cpp
does) with a Precompiled(charsmap) normaliser, spaces collapsed and trimmed,
and Metaspace. SentencePiece itself, which sums in single precision, is
compared too and its agreement recorded in the meta line: it differs only where
two segmentations tie on score. The user-defined symbols are in the vocabulary
but not in the strings: tessera, like llama.cpp, splits them out before the
model sees the text, which HF's model-level match does not reproduce.

First line: {"meta", "tokens", "scores", "types" (GGUF numbering), "unk",
"charsmap" (base64), "add_space_prefix", "remove_extra_whitespaces"}; then one
{"text", "ids"} per string, encoded without special tokens.

Usage: tools/gen_tokenizer_unigram_golden.py [OUT] [--seed 29] [--n 1000]
"""

import argparse
import base64
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_tokenizer_golden import gen_corpus  # noqa: E402

USER_DEFINED = ["<extra_id_0>", "[tool]"]
EXTRA = ["ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３", "ﬁne ﬀ ½ ㎏ ①", "  leading and   inner   spaces  ", "tab\tand\nnewline",
         "e\u0301te\u0301 vs \u00e9t\u00e9", "\u3000ideographic\u3000space",
         "zero\u200bwidth", "control\u0007char", "ÅNGSTRÖM ΩΩ", "你好，世界！", "x" * 300]


def read_varint(buf, pos):
    value, shift = 0, 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, pos


def proto_fields(buf):
    """(field number, wire type, value) of a serialized protobuf message."""
    pos = 0
    while pos < len(buf):
        key, pos = read_varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = read_varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 2:
            n, pos = read_varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        yield field, wire, value


def precompiled_charsmap(model_proto):
    for field, _, value in proto_fields(model_proto):
        if field == 3:  # ModelProto.normalizer_spec
            for f, _, v in proto_fields(value):
                if f == 2:  # NormalizerSpec.precompiled_charsmap
                    return bytes(v)
    return b""


def main():
    import sentencepiece as spm
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", default="tests/golden/tokenizer_unigram.jsonl")
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--n", type=int, default=1000)
    args = ap.parse_args()

    generated = [t for c, t in gen_corpus(args.seed, args.n + 200) if c != "long"]
    corpus = EXTRA + generated[: args.n - len(EXTRA)]

    with tempfile.TemporaryDirectory() as tmp:
        train = os.path.join(tmp, "train.txt")
        with open(train, "w", encoding="utf-8") as f:
            for text in generated:
                f.write(text.replace("\n", " ") + "\n")
        spm.SentencePieceTrainer.train(
            input=train, model_prefix=os.path.join(tmp, "m"), model_type="unigram", vocab_size=1500,
            normalization_rule_name="nmt_nfkc", add_dummy_prefix=True, remove_extra_whitespaces=True,
            character_coverage=0.9995, user_defined_symbols=USER_DEFINED, pad_id=0, eos_id=1, unk_id=2,
            bos_id=-1, num_threads=1, minloglevel=2)
        sp = spm.SentencePieceProcessor(model_file=os.path.join(tmp, "m.model"))
    charsmap = precompiled_charsmap(sp.serialized_model_proto())

    tokens, scores, types = [], [], []
    for i in range(sp.get_piece_size()):
        tokens.append(sp.id_to_piece(i))
        scores.append(sp.get_score(i))
        if sp.is_unknown(i):
            types.append(2)
        elif sp.is_control(i):
            types.append(3)
        elif tokens[-1] in USER_DEFINED:
            types.append(4)
        elif sp.is_unused(i):
            types.append(5)
        elif sp.is_byte(i):
            types.append(6)
        else:
            types.append(1)
    unk = sp.unk_id()

    # Control and unknown pieces are never matched in text (SentencePiece,
    # llama.cpp); HF would match their spelling, so they get one no text has.
    vocab = [(t if types[i] not in (2, 3) else f"\ue000control{i}", s if types[i] != 4 else 0.0)
             for i, (t, s) in enumerate(zip(tokens, scores))]
    hf = Tokenizer(models.Unigram(vocab, unk_id=unk, byte_fallback=False))
    # SentencePiece's remove_extra_whitespaces: ASCII spaces (what the charsmap
    # leaves) trimmed at both ends and collapsed inside.
    hf.normalizer = normalizers.Sequence([normalizers.Precompiled(charsmap), normalizers.Replace(Regex("^ +| +$"), ""),
                                          normalizers.Replace(Regex(" {2,}"), " ")])
    hf.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")

    rows, sp_equal = [], 0
    for text in corpus:
        ids = hf.encode(text, add_special_tokens=False).ids
        sp_equal += sp.encode(text) == ids
        rows.append({"text": text, "ids": ids})
        if sp.encode(text) != ids:
            print("differs from sentencepiece:", json.dumps(text, ensure_ascii=False)[:80], ids[:12], sp.encode(text)[:12])

    header = {"meta": {"script": "tools/gen_tokenizer_unigram_golden.py", "seed": args.seed,
                       "reference": "hf-tokenizers Unigram", "sentencepiece_equal": f"{sp_equal}/{len(rows)}"},
              "tokens": tokens, "scores": scores, "types": types, "unk": unk,
              "charsmap": base64.b64encode(charsmap).decode(), "add_space_prefix": True,
              "remove_extra_whitespaces": True}
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps(header, ensure_ascii=False) + "\n")
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} cases, {len(tokens)} pieces, charsmap {len(charsmap)} bytes to {args.out}; "
          f"sentencepiece equal on {sp_equal}")


if __name__ == "__main__":
    main()
