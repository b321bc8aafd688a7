#!/usr/bin/env python3
# llama.cpp's logits (through llama-cpp-python, F32 KV cache) for the tiny
# gpt-oss of tools/hf_moe_models.py (F32 experts) on its prompts: a third
# implementation reading the file as written, stored in
# tests/golden/moe/llama_cpp_gpt_oss.npz for tests/e2e/test_moe_hf.py. Written
# with llama-cpp-python 0.3.36. llama.cpp always rounds YaRN's ramp to whole
# dimensions, so its logits are compared with transformers' run with
# "truncate": true (gpt-oss-yarn-rounded in hf_logits.npz).
"""Usage: llama_cpp_gpt_oss_logits.py [--out tests/golden/moe/llama_cpp_gpt_oss.npz]"""
from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import hf_moe_models as hm  # noqa: E402

GGML_TYPE_F32 = 0  # llama-cpp-python's type_k / type_v take ggml type ids


def main(argv: list[str]) -> int:
    import llama_cpp
    root = pathlib.Path(__file__).resolve().parents[1]
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=str(root / "tests" / "golden" / "moe" / "llama_cpp_gpt_oss.npz"))
    a = ap.parse_args(argv)
    out = {"version": np.array(llama_cpp.__version__)}
    with tempfile.TemporaryDirectory() as d:
        path = str(pathlib.Path(d) / "gpt-oss.gguf")
        hm.write_gpt_oss_gguf(hm.random_weights("gpt-oss"), path, merges=("< 1",))
        llm = llama_cpp.Llama(model_path=path, n_ctx=64, logits_all=True, verbose=False, n_threads=1,
                              type_k=GGML_TYPE_F32, type_v=GGML_TYPE_F32)
        for i, tokens in enumerate(hm.PROMPTS):
            llm.reset()
            llm.eval(tokens)
            out[f"gpt-oss/{i}"] = np.array(llm.scores[: len(tokens)], dtype=np.float32)
    np.savez_compressed(a.out, **out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
