#!/usr/bin/env python3
"""Golden sentence embeddings from llama.cpp (through llama-cpp-python).

For each text: the token ids llama.cpp embeds (its tokenizer, BOS/EOS as the
vocabulary asks, special-token text read as text) and llama.cpp's pooled,
L2-normalised embedding, for one pooling (llama.cpp's --pooling: mean, cls or
last). tessera's /v1/embeddings must give vectors within cosine 0.99 of these
for the same ids (tests/e2e/test_embeddings.py).

Usage: python3 tools/gen_embedding_golden.py MODEL.gguf --pooling last OUT.json
Needs: .venv/bin/pip install llama-cpp-python
"""
import argparse
import hashlib
import json
import sys

import numpy as np
import llama_cpp
from llama_cpp import Llama

TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "Paris is the capital of France.",
    "def add(a, b):\n    return a + b",
    "Embeddings map text to vectors; similar meanings land close together.",
    "¿Dónde está la biblioteca? 图书馆在哪里？",
    "1 2 3 4 5 6 7 8 9 10",
]
POOLING = {"mean": llama_cpp.LLAMA_POOLING_TYPE_MEAN, "cls": llama_cpp.LLAMA_POOLING_TYPE_CLS,
           "last": llama_cpp.LLAMA_POOLING_TYPE_LAST}


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--pooling", choices=sorted(POOLING), default="last")
    a = ap.parse_args(argv)
    # F32 KV cache and one sequence per call: the most exact llama.cpp path.
    llm = Llama(model_path=a.model, embedding=True, pooling_type=POOLING[a.pooling], n_ctx=512, n_batch=512,
                n_ubatch=512, n_threads=2, type_k=llama_cpp.GGML_TYPE_F32, type_v=llama_cpp.GGML_TYPE_F32,
                verbose=False)
    cases = []
    for text in TEXTS:
        ids = llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)
        vec = np.asarray(llm.embed(text, normalize=True), dtype=np.float64)
        assert vec.ndim == 1, "llama.cpp returned per-token embeddings: pooling is none"
        cases.append({"text": text, "tokens": ids, "embedding": [round(float(x), 7) for x in vec]})
    golden = {"model": a.model.rsplit("/", 1)[-1], "model_sha256": sha256(a.model), "pooling": a.pooling,
              "llama_cpp_python": llama_cpp.__version__, "cases": cases}
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
