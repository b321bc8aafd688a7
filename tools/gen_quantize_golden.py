#!/usr/bin/env python3
"""What llama.cpp's quantizer makes of tools/make_tiny_model.py's F32 model
(variant gqa, seed 4), for tests/e2e/test_quantize.py: per mix, each 2-D
tensor's type and the relative RMS error of its dequantized weights.
Needs llama-cpp-python (built from its sdist); CI reads the stored file.

Usage: gen_quantize_golden.py --out tests/golden/quant/llamacpp_tiny_gqa_seed4.json
"""
from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import gguf
import llama_cpp

ROOT = pathlib.Path(__file__).resolve().parents[1]
MIXES = {"Q4_0": 2, "Q8_0": 7, "Q4_K_S": 14, "Q4_K_M": 15, "Q5_K_M": 17, "Q6_K": 18}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "tiny-f32.gguf"
        subprocess.run([sys.executable, str(ROOT / "tools" / "make_tiny_model.py"), "--out", str(src),
                        "--variant", "gqa", "--wtype", "F32", "--seed", "4"], check=True)
        weights = {t.name: np.asarray(t.data, dtype=np.float64).reshape(-1)
                   for t in gguf.GGUFReader(str(src)).tensors if len(t.shape) >= 2}
        golden = {"engine": f"llama-cpp-python {llama_cpp.__version__}", "mixes": {}}
        for mix, ftype in MIXES.items():
            out = pathlib.Path(tmp) / f"{mix}.gguf"
            params = llama_cpp.llama_model_quantize_default_params()
            params.ftype = ftype
            assert llama_cpp.llama_model_quantize(str(src).encode(), str(out).encode(), params) == 0
            tensors = {}
            for t in gguf.GGUFReader(str(out)).tensors:
                if t.name not in weights:
                    continue
                w = weights[t.name]
                d = gguf.quants.dequantize(np.asarray(t.data), t.tensor_type).reshape(-1)
                tensors[t.name] = {"type": t.tensor_type.name,
                                   "rel_rms": float(np.sqrt(np.mean((d - w) ** 2) / np.mean(w ** 2)))}
            golden["mixes"][mix] = tensors
    pathlib.Path(a.out).write_text(json.dumps(golden, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
