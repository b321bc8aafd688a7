#!/usr/bin/env python3
"""Writes tests/golden/quant/<TYPE>.bin: reference (de)quantization results from
gguf-py (pip package `gguf`, module gguf.quants), which mirrors ggml's reference C
code. The unit tests in tests/unit/tensor_quant_test.cpp check tessera against them.

File format (all little-endian):
    magic    4 bytes  b"TQG1"
    type     u32      GGUF type id (GGMLQuantizationType)
    n        u32      number of elements
    flags    u32      bit 0: a source array is present
    source   n x f32  (only if flags & 1) the input that was quantized
    quant    bytes    the encoded row, n / block_size * type_size bytes
    dequant  n x f32  gguf.quants.dequantize(quant)

Types gguf-py can quantize (F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, MXFP4) get
seeded random source data; the others (dequantize only in gguf-py: the
K-quants, IQ4_NL, IQ4_XS) get seeded random block bytes with finite fp16 scale
fields.

Usage: python3 tools/gen_quant_golden.py [out_dir]
"""
import struct
import sys
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType as T, GGML_QUANT_SIZES
from gguf import quants

QUANTIZABLE = [T.F16, T.BF16, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0, T.MXFP4]
# Random-byte types -> byte offsets of their fp16 scale fields inside a block.
RANDOM_BYTES_F16_FIELDS = {T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208], T.Q2_K: [80, 82], T.Q3_K: [108],
                           T.IQ4_NL: [0], T.IQ4_XS: [0]}
# The order types were added in: each one's seed is 1234 + its index here,
# so adding a type leaves the existing files unchanged.
ALL_TYPES = [T.F16, T.BF16, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0, T.Q4_K, T.Q5_K, T.Q6_K,
             T.MXFP4, T.Q2_K, T.Q3_K, T.IQ4_NL, T.IQ4_XS]


def source_data(rng: np.random.Generator, qtype: T, n_blocks: int, block: int) -> np.ndarray:
    """Blocks of different magnitudes, plus the awkward cases quantizers must get right."""
    scales = np.exp(rng.uniform(-6, 3, size=(n_blocks, 1)))
    x = (rng.standard_normal((n_blocks, block)) * scales).astype(np.float32)
    x[0] = 0.0                                  # all-zero block: scale 0
    x[1] = np.float32(0.5)                      # constant block
    x[2, : block // 2] = -x[2, block // 2 :]    # tie for the largest magnitude
    x[3] = np.round(x[3] * 4) / 4               # many exact halves after scaling
    # numpy's min/argmax pick a different zero than ggml's loops when a block
    # holds both -0.0 and +0.0 (ggml keeps the first), so keep zeros positive.
    x = np.where(x == 0, np.float32(0.0), x).astype(np.float32)
    if qtype in (T.F16, T.BF16):
        specials = [np.inf, -np.inf, np.nan, 65504.0, 65520.0, 1e6, 6e-8, 3e-8, 1e-40, -0.0,
                    2.0**-24 * 1.5, 2.0**-14, 1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11]
        x[4, : len(specials)] = np.array(specials, dtype=np.float32)
    return x.reshape(-1)


def random_block_bytes(rng: np.random.Generator, qtype: T, n_blocks: int, type_size: int) -> np.ndarray:
    raw = rng.integers(0, 256, size=(n_blocks, type_size), dtype=np.uint8)
    for off in RANDOM_BYTES_F16_FIELDS[qtype]:
        vals = (rng.uniform(1e-4, 0.05, size=n_blocks) * rng.choice([-1, 1], size=n_blocks)).astype(np.float16)
        raw[:, off : off + 2] = vals.view(np.uint8).reshape(n_blocks, 2)
    return raw.reshape(-1)


def write_case(out_dir: Path, qtype: T, seed: int) -> None:
    block, type_size = GGML_QUANT_SIZES[qtype]
    n_blocks = 8 if block < 256 else 4
    if block == 1:
        n_blocks = 256
    n = n_blocks * block
    rng = np.random.default_rng(seed)
    source = None
    if qtype in QUANTIZABLE:
        source = source_data(rng, qtype, n_blocks if block > 1 else 8, block if block > 1 else 32)
        quant = quants.quantize(source, qtype).reshape(-1).view(np.uint8)
    else:
        quant = random_block_bytes(rng, qtype, n_blocks, type_size)
    deq = quants.dequantize(quant, qtype).astype(np.float32).reshape(-1)
    assert quant.size == n_blocks * type_size and deq.size == n
    with open(out_dir / f"{qtype.name}.bin", "wb") as f:
        f.write(b"TQG1")
        f.write(struct.pack("<III", int(qtype), n, 1 if source is not None else 0))
        if source is not None:
            f.write(source.astype("<f4").tobytes())
        f.write(quant.tobytes())
        f.write(deq.astype("<f4").tobytes())


def main() -> None:
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "tests/golden/quant"
    out_dir.mkdir(parents=True, exist_ok=True)
    for i, qtype in enumerate(ALL_TYPES):
        write_case(out_dir, qtype, seed=1234 + i)
        print(f"wrote {out_dir / (qtype.name + '.bin')}")


if __name__ == "__main__":
    main()
