#!/usr/bin/env python3
# Writes full-size llama-shaped GGUF models with random weights (SmolLM2-135M
# or TinyLlama-1.1B geometry) so speed can be measured on weight types and
# sizes no real model here has; llama.cpp loads them too (valid gpt2 vocab).
"""Usage: make_random_llama.py --shape 135m|1.1b --wtype Q4_0|Q4_1|Q5_0|Q5_1|Q8_0|Q4_K|Q5_K|Q6_K|Q4_K_M|BF16|F16 --out FILE.gguf

Every matrix (and the token embedding / output head) is stored in --wtype;
norms stay F32. Q4_K_M is llama.cpp's mix of that name: Q6_K for the output
head (the token embedding where it is tied) and for attn_v and ffn_down in
the layers llama-quantize gives more bits (the first and last eighth and
every third between), Q4_K elsewhere, and, as llama-quantize does, Q5_0
for Q4_K and Q8_0 for Q6_K in matrices whose rows are not a multiple of 256
(SmolLM2's 576-wide ones: so `--shape 135m --wtype Q4_K_M` is what a
SmolLM2-135M Q4_K_M download holds). K-quant rows must be a multiple of 256
elements, so `--shape 135m --wtype Q4_K` (or Q5_K, Q6_K) widens the model
to 768 (12 query / 4 KV heads of 64): still a 135M-class model. The weights are
random (N(0, 1/fan_in)), so the text is noise: these files are for speed only.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as QT

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_tiny_model import QK_K, byte_tokens, encode  # noqa: E402

# name -> (n_vocab, n_embd, n_layer, n_head, n_head_kv, n_ff, n_ctx, rope base, tied)
SHAPES = {
    "135m": (49152, 576, 30, 9, 3, 1536, 8192, 100000.0, True),
    "1.1b": (32000, 2048, 22, 32, 4, 5632, 4096, 10000.0, False),
}
WTYPES = ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K", "Q4_K_M", "BF16", "F16"]
K_WTYPES = ("Q4_K", "Q5_K", "Q6_K")
# llama-quantize's types for K-quant matrices whose rows are not whole super-blocks.
K_FALLBACK = {QT.Q4_K: QT.Q5_0, QT.Q6_K: QT.Q8_0}
# The file type a model of each --wtype declares (K-quant files name a mix).
FILE_TYPES = {"Q4_K": "MOSTLY_Q4_K_M", "Q5_K": "MOSTLY_Q5_K_M", "Q4_K_M": "MOSTLY_Q4_K_M"}
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def more_bits(layer: int, n_layer: int) -> bool:
    """The layers whose attn_v and ffn_down llama-quantize's Q4_K_M keeps in Q6_K."""
    eighth = n_layer // 8
    return layer < eighth or layer >= 7 * n_layer // 8 or (layer - eighth) % 3 == 2


def vocab(n_vocab: int) -> tuple[list[str], list[str], list[int]]:
    """Byte tokens, then merges of printable tokens (pairs, then longer runs)
    until the vocabulary has n_vocab entries; each merge names two existing
    tokens whose concatenation is the new token, as a BPE vocab must."""
    tokens = byte_tokens()
    seen = set(tokens)
    alphabet = [chr(c) for c in range(ord("!"), ord("~") + 1)]
    merges: list[str] = []
    n_normal = n_vocab - len(SPECIALS)
    frontier = list(alphabet)
    while len(tokens) < n_normal:
        grown = []
        for left in frontier:
            for right in alphabet:
                if len(tokens) == n_normal:
                    break
                new = left + right
                if new in seen:
                    continue
                seen.add(new)
                tokens.append(new)
                merges.append(f"{left} {right}")
                grown.append(new)
        frontier = grown
    tokens += SPECIALS
    types = [1] * n_normal + [3] * len(SPECIALS)  # 1 normal, 3 control
    return tokens, merges, types


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", choices=sorted(SHAPES), required=True)
    ap.add_argument("--wtype", choices=WTYPES, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    n_vocab, n_embd, n_layer, n_head, n_kv, n_ff, n_ctx, base, tied = SHAPES[a.shape]
    head_dim = n_embd // n_head
    if a.wtype in K_WTYPES and n_embd % QK_K:
        n_embd, n_head, n_kv = 768, 12, 4
    mixed = a.wtype == "Q4_K_M"
    qtype = QT.Q4_K if mixed else QT[a.wtype]
    rng = np.random.default_rng(a.seed)

    w = gguf.GGUFWriter(a.out, "llama")
    w.add_name(f"tessera-random-{a.shape}-{a.wtype}")
    w.add_context_length(n_ctx)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(base)
    w.add_rope_dimension_count(head_dim)
    w.add_file_type(int(gguf.LlamaFileType[FILE_TYPES.get(a.wtype, f"MOSTLY_{a.wtype}")]))
    tokens, merges, types = vocab(n_vocab)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(n_vocab - len(SPECIALS))
    w.add_eos_token_id(n_vocab - len(SPECIALS))

    def mat(name: str, n_out: int, n_in: int, scale: float | None = None, more: bool = False) -> None:
        m = (rng.standard_normal((n_out, n_in), dtype=np.float32) * (scale or 1.0 / np.sqrt(n_in)))
        t = QT.Q6_K if mixed and more else qtype
        if mixed and n_in % QK_K:
            t = K_FALLBACK[t]
        w.add_tensor(name, encode(m, t), raw_dtype=t)

    def norm(name: str) -> None:
        w.add_tensor(name, (1.0 + 0.1 * rng.standard_normal(n_embd)).astype(np.float32))

    q_dim, kv_dim = n_head * head_dim, n_kv * head_dim
    mat("token_embd.weight", n_vocab, n_embd, 1.0 / np.sqrt(n_embd) if tied else 1.0, more=tied)
    for i in range(n_layer):
        p = f"blk.{i}."
        norm(p + "attn_norm.weight")
        mat(p + "attn_q.weight", q_dim, n_embd)
        mat(p + "attn_k.weight", kv_dim, n_embd)
        mat(p + "attn_v.weight", kv_dim, n_embd, more=more_bits(i, n_layer))
        mat(p + "attn_output.weight", n_embd, q_dim)
        norm(p + "ffn_norm.weight")
        mat(p + "ffn_gate.weight", n_ff, n_embd)
        mat(p + "ffn_up.weight", n_ff, n_embd)
        mat(p + "ffn_down.weight", n_embd, n_ff, more=more_bits(i, n_layer))
    norm("output_norm.weight")
    if not tied:
        mat("output.weight", n_vocab, n_embd, more=True)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
