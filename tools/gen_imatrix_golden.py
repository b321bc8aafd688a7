#!/usr/bin/env python3
"""llama.cpp's importance matrix of a model over a text, summarised for
tests/e2e/test_imatrix.py (tests/golden/imatrix/).

Usage: gen_imatrix_golden.py MODEL TEXT --llama-bin DIR --ctx 128 --chunks 8 --out FILE.json

Runs llama.cpp's `llama-imatrix` (built from the llama-cpp-python 0.3.36
sdist's vendored llama.cpp, docs/BENCHMARKS.md "Measuring") on MODEL over
TEXT in --chunks chunks of --ctx tokens, reads the GGUF matrix it writes
and stores, per weight tensor, its row count, the mean over columns of the
mean squared input, and the 8 columns with the largest mean squared input
with their values. The whole matrix (hundreds of KB) is not stored: the
mean checks the scale of what was summed, the largest columns check that
it was the right input (the outlier channels differ from one matmul input
to the next).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

import gguf
import numpy as np

TOP = 8


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("text")
    ap.add_argument("--llama-bin", required=True, help="folder holding llama-imatrix")
    ap.add_argument("--ctx", type=int, default=128)
    ap.add_argument("--chunks", type=int, default=8)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        matrix = pathlib.Path(tmp) / "imatrix.gguf"
        subprocess.run([str(pathlib.Path(a.llama_bin) / "llama-imatrix"), "-m", a.model, "-f", a.text,
                        "-c", str(a.ctx), "--chunks", str(a.chunks), "-t", "2", "--no-ppl", "-o", str(matrix)],
                       check=True, capture_output=True)
        reader = gguf.GGUFReader(str(matrix))
        data = {t.name: np.asarray(t.data, dtype=np.float64).reshape(-1) for t in reader.tensors}

    tensors = {}
    for name in sorted(data):
        if not name.endswith(".in_sum2"):
            continue
        weight = name[: -len(".in_sum2")]
        counts = data[weight + ".counts"]
        assert counts.size == 1, f"{weight}: expert tensors are not summarised here"
        means = data[name] / counts[0]
        top = np.argsort(-means, kind="stable")[:TOP]
        tensors[weight] = {"count": int(counts[0]), "mean": float(means.mean()),
                           "top_columns": [int(c) for c in top], "top_values": [float(means[c]) for c in top]}
    out = {"model": pathlib.Path(a.model).name, "text": a.text, "ctx": a.ctx, "chunks": a.chunks,
           "tool": "llama-imatrix (llama-cpp-python 0.3.36 sdist)", "tensors": tensors}
    head = json.dumps({k: v for k, v in out.items() if k != "tensors"})[:-1]
    rows = ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in tensors.items())
    pathlib.Path(a.out).write_text(f'{head}, "tensors": {{\n{rows}\n}}}}\n')  # one tensor per line
    print(f"wrote {a.out}: {len(tensors)} tensors")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
