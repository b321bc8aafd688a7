#!/usr/bin/env python3
# llama.cpp's logits (through llama-cpp-python) on the tiny random models of
# tools/make_tiny_model.py: a third implementation, written by others, of the
# same GGUF conventions (tensor names, Gemma's stored 1 + w norms, query
# scale, sliding windows, soft-caps). Writes them as the golden file that
# tests/e2e/test_llama_cpp_crosscheck.py compares tessera against.
"""Usage: llama_cpp_logits.py --out tests/e2e/golden/llama_cpp_tiny_logits.npz"""
from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import make_tiny_model as tiny  # noqa: E402

TOKENS = [1, 5, 9, 23, 42, 7, 3, 100, 250, 17, 64, 128, 2, 99, 31, 77]
# phi3 is not here: llama.cpp refuses the tiny vocabulary for phi3.
CASES = {  # name -> make_tiny_model arguments (F32 weights, seed 0)
    "qwen3": dict(variant="qwen3", tied=False),
    "gemma2": dict(variant="gemma2", tied=True),
    "gemma3": dict(variant="gemma3", tied=True),
    "gemma3_untied": dict(variant="gemma3", tied=False),
}


def write_case(out_dir: str, name: str) -> str:
    path = str(pathlib.Path(out_dir) / f"{name}.gguf")
    tiny.write_model(path, CASES[name]["variant"], "F32", tied=CASES[name]["tied"])
    return path


def llama_cpp_logits(path: str) -> np.ndarray:
    from llama_cpp import Llama
    llm = Llama(model_path=path, n_ctx=64, logits_all=True, verbose=False, n_threads=2)
    llm.eval(TOKENS)
    return np.array(llm.scores[: len(TOKENS)], dtype=np.float32)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        logits = {name: llama_cpp_logits(write_case(d, name)) for name in CASES}
    np.savez_compressed(a.out, tokens=np.array(TOKENS), **logits)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
