#!/usr/bin/env python3
"""Perplexity of a model over a text as llama.cpp computes it, for
tests/e2e/test_perplexity.py (tests/golden/perplexity/).

Usage: gen_perplexity_golden.py MODEL TEXT --ctx 256 --chunks 4 --out NAME

llama.cpp (llama-cpp-python, built from its sdist) evaluates each chunk of
--ctx tokens from an empty context with every position's logits, F32 KV
cache; the second half of each chunk is scored exactly as llama.cpp's
`llama-perplexity` does (first token of a chunk replaced by BOS when the
vocabulary adds one). Writes NAME.json (the perplexity and settings) and
NAME_top8.bin, llama.cpp's top-8 log-probabilities per scored position in
the format `tessera perplexity --kl-divergence` reads (src/eval/
reference_logits.h), so tessera's distributions can be compared with
llama.cpp's directly.
"""
from __future__ import annotations

import argparse
import json
import math
import struct
import sys

import numpy as np
import llama_cpp

TOP_K = 8
GGML_TYPE_F32 = 0


def fnv_text_hash(tokens: list[int], n_ctx: int, n_chunks: int) -> int:
    # Same as scored_text_hash in src/eval/reference_logits.cpp.
    h = 1469598103934665603
    for v in [n_ctx, n_chunks] + [t & 0xFFFFFFFF for t in tokens]:
        for b in range(8):
            h = ((h ^ ((v >> (8 * b)) & 0xFF)) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("text")
    ap.add_argument("--ctx", type=int, default=256)
    ap.add_argument("--chunks", type=int, default=4)
    ap.add_argument("--out", required=True, help="output path without extension")
    a = ap.parse_args(argv)

    llm = llama_cpp.Llama(a.model, n_ctx=a.ctx, n_batch=a.ctx, logits_all=True, verbose=False,
                          type_k=GGML_TYPE_F32, type_v=GGML_TYPE_F32, n_threads=2)
    text = open(a.text, encoding="utf-8").read()
    add_bos = bool(llama_cpp.llama_vocab_get_add_bos(llama_cpp.llama_model_get_vocab(llm.model)))
    tokens = llm.tokenize(text.encode(), add_bos=add_bos, special=False)
    n_chunks = min(a.chunks, len(tokens) // a.ctx)
    first = a.ctx // 2
    nlls, records = [], []
    for c in range(n_chunks):
        chunk = list(tokens[c * a.ctx:(c + 1) * a.ctx])
        if add_bos:
            chunk[0] = llm.token_bos()
        llm.reset()
        llm.eval(chunk)
        logits = np.array(llm.scores[:a.ctx], dtype=np.float64)
        for j in range(first, a.ctx - 1):
            row = logits[j]
            lse = row.max() + math.log(np.exp(row - row.max()).sum())
            nll = lse - row[chunk[j + 1]]
            nlls.append(nll)
            top = np.argsort(-row, kind="stable")[:TOP_K]
            records.append(struct.pack("<f", max(0.0, nll)) +
                           b"".join(struct.pack("<if", int(t), min(0.0, row[t] - lse)) for t in top))
    ppl = math.exp(sum(nlls) / len(nlls))
    golden = {"perplexity": ppl, "n_ctx": a.ctx, "n_chunks": n_chunks, "n_tokens": len(tokens),
              "scored": len(nlls), "kv_type": "f32", "engine": f"llama-cpp-python {llama_cpp.__version__}"}
    with open(a.out + ".json", "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")
    scored_tokens = [int(t) for t in tokens[:n_chunks * a.ctx]]
    header = b"TSRL" + struct.pack("<4I2Q", 1, llm.n_vocab(), a.ctx, TOP_K, len(records),
                                   fnv_text_hash(scored_tokens, a.ctx, n_chunks))
    with open(a.out + f"_top{TOP_K}.bin", "wb") as f:
        f.write(header + b"".join(records))
    print(json.dumps(golden))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
