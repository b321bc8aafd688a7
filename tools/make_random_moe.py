#!/usr/bin/env python3
# Writes random-weight mixture-of-experts GGUF models in llama.cpp's layout
# (qwen3moe, qwen2moe, olmoe, granitemoe, and mixtral = llama with experts): tiny ones
# that tests/e2e/test_moe.py runs through `tessera logits` and through the
# NumPy reference (tools/reference_forward.py), and an OLMoE-like shape
# (64 experts, top-8) for docs/BENCHMARKS.md.
"""Usage: make_random_moe.py --arch qwen3moe|qwen2moe|olmoe|granitemoe|mixtral --out FILE.gguf
                          [--shape tiny|bench] [--wtype F32|F16|Q8_0|Q4_0|Q4_K|...]

Expert matrices are 3-D tensors (ffn_{gate,up,down}_exps: n_expert 2-D
matrices back to back), the router ffn_gate_inp is [n_embd, n_expert];
qwen2moe adds a shared expert (ffn_{gate,up,down}_shexp) and its gate
ffn_gate_inp_shexp ([n_embd], F32). Every matrix is stored in --wtype except
the router and the shared-expert gate, kept F32 as llama-quantize keeps
ffn_gate_inp; norms and biases are F32. Weights are N(0, 1/fan_in) (Q/K a
little larger so attention is peaked, the router larger so routing is
decisive), so the text is noise: for tests and speed only.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as QT

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_tiny_model as tiny  # noqa: E402

# arch -> (GGUF architecture, n_head, n_head_kv, head_dim, n_expert, n_used, rms eps, rope base)
ARCHS = {
    # q_dim (512) != n_embd: key_length is written, as for qwen3.
    "qwen3moe": ("qwen3moe", 8, 2, 64, 8, 2, 1e-6, 1000000.0),
    "qwen2moe": ("qwen2moe", 4, 2, 64, 8, 2, 1e-6, 1000000.0),
    "olmoe": ("olmoe", 4, 2, 64, 8, 2, 1e-5, 10000.0),
    "mixtral": ("llama", 8, 2, 32, 8, 2, 1e-5, 1000000.0),
    "granitemoe": ("granitemoe", 4, 2, 64, 8, 2, 1e-6, 10000.0),
}
GRANITE_SCALES = tiny.GRANITE_SCALES  # granitemoe's multipliers, as the dense granite's
# name -> (n_vocab or 0 for the tiny 300-token vocab, n_embd, n_layer, n_ff_exp, n_ff_shexp, experts, used, n_head, kv)
SHAPES = {
    "tiny": (0, tiny.N_EMBD, 2, 256, 256, None, None, None, None),
    # OLMoE-1B-7B's expert count, top-k and expert width ratio at half its
    # width and layers (about 0.9B parameters, 0.17B active per token).
    "bench": (32000, 1024, 8, 512, 1024, 64, 8, 16, 16),
}
QK_GAIN = tiny.QK_GAIN
ROUTER_GAIN = 2.0


def write_model(out: str, arch_name: str, shape: str = "tiny", wtype: str = "F32", seed: int = 0) -> None:
    arch, n_head, n_kv, hd, n_expert, n_used, eps, base = ARCHS[arch_name]
    n_vocab, n_embd, n_layer, n_ff_exp, n_ff_shexp, s_exp, s_used, s_head, s_kv = SHAPES[shape]
    if shape != "tiny":
        n_expert, n_used, n_head, n_kv, hd = s_exp, s_used, s_head, s_kv, n_embd // s_head
    qtype = QT[wtype]
    rng = np.random.default_rng(seed)
    w = gguf.GGUFWriter(out, arch)
    w.add_name(f"tessera-random-{arch_name}-{shape}-{wtype}")
    w.add_context_length(tiny.N_CTX if shape == "tiny" else 4096)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    # mixtral, olmoe and granitemoe read each expert's width from feed_forward_length;
    # the qwen MoE files carry a (here unused) dense width there and the
    # expert widths in their own keys.
    w.add_feed_forward_length(n_ff_exp if arch_name in ("mixtral", "olmoe", "granitemoe") else 4 * n_embd)
    if arch_name in ("qwen3moe", "qwen2moe"):
        w.add_expert_feed_forward_length(n_ff_exp)
    if arch_name == "qwen2moe":
        w.add_expert_shared_feed_forward_length(n_ff_shexp)
    w.add_expert_count(n_expert)
    w.add_expert_used_count(n_used)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_layer_norm_rms_eps(eps)
    w.add_rope_freq_base(base)
    w.add_rope_dimension_count(hd)
    if arch_name == "granitemoe":
        emb, res, logit, attn = GRANITE_SCALES
        w.add_embedding_scale(emb)
        w.add_residual_scale(res)
        w.add_logit_scale(logit)
        w.add_attention_scale(attn)
    if n_head * hd != n_embd:
        w.add_key_length(hd)
        w.add_value_length(hd)
    if shape == "tiny":
        n_vocab = tiny.add_vocab(w)
    else:
        from make_random_llama import SPECIALS, vocab
        tokens, merges, types = vocab(n_vocab)
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre("default")
        w.add_token_list(tokens)
        w.add_token_types(types)
        w.add_token_merges(merges)
        w.add_bos_token_id(n_vocab - len(SPECIALS))
        w.add_eos_token_id(n_vocab - len(SPECIALS))

    def f32(name: str, value: np.ndarray) -> None:
        w.add_tensor(name, value.astype(np.float32))

    def mat(name: str, n_out: int, n_in: int, gain: float = 1.0) -> None:
        m = rng.standard_normal((n_out, n_in), dtype=np.float32) * np.float32(gain / np.sqrt(n_in))
        w.add_tensor(name, tiny.encode(m, qtype), raw_dtype=qtype)

    def experts(name: str, n_out: int, n_in: int) -> None:
        m = rng.standard_normal((n_expert, n_out, n_in), dtype=np.float32) * np.float32(1.0 / np.sqrt(n_in))
        enc = np.stack([tiny.encode(m[e], qtype) for e in range(n_expert)])
        w.add_tensor(name, enc, raw_dtype=qtype)

    def norm(n: int) -> np.ndarray:
        return 1.0 + 0.1 * rng.standard_normal(n)

    q_dim, kv_dim = n_head * hd, n_kv * hd
    mat("token_embd.weight", n_vocab, n_embd, gain=np.sqrt(n_embd))  # N(0, 1) rows
    for i in range(n_layer):
        p = f"blk.{i}."
        f32(p + "attn_norm.weight", norm(n_embd))
        mat(p + "attn_q.weight", q_dim, n_embd, QK_GAIN)
        mat(p + "attn_k.weight", kv_dim, n_embd, QK_GAIN)
        mat(p + "attn_v.weight", kv_dim, n_embd)
        if arch_name == "qwen2moe":
            f32(p + "attn_q.bias", 0.1 * rng.standard_normal(q_dim))
            f32(p + "attn_k.bias", 0.1 * rng.standard_normal(kv_dim))
            f32(p + "attn_v.bias", 0.1 * rng.standard_normal(kv_dim))
        if arch_name == "qwen3moe":  # per head
            f32(p + "attn_q_norm.weight", QK_GAIN * norm(hd))
            f32(p + "attn_k_norm.weight", QK_GAIN * norm(hd))
        if arch_name == "olmoe":  # over the whole projections
            f32(p + "attn_q_norm.weight", QK_GAIN * norm(q_dim))
            f32(p + "attn_k_norm.weight", QK_GAIN * norm(kv_dim))
        mat(p + "attn_output.weight", n_embd, q_dim)
        f32(p + "ffn_norm.weight", norm(n_embd))
        f32(p + "ffn_gate_inp.weight", ROUTER_GAIN * rng.standard_normal((n_expert, n_embd)) / np.sqrt(n_embd))
        experts(p + "ffn_gate_exps.weight", n_ff_exp, n_embd)
        experts(p + "ffn_up_exps.weight", n_ff_exp, n_embd)
        experts(p + "ffn_down_exps.weight", n_embd, n_ff_exp)
        if arch_name == "qwen2moe":
            f32(p + "ffn_gate_inp_shexp.weight", rng.standard_normal(n_embd) / np.sqrt(n_embd))
            mat(p + "ffn_gate_shexp.weight", n_ff_shexp, n_embd)
            mat(p + "ffn_up_shexp.weight", n_ff_shexp, n_embd)
            mat(p + "ffn_down_shexp.weight", n_embd, n_ff_shexp)
    f32("output_norm.weight", norm(n_embd))
    mat("output.weight", n_vocab, n_embd)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", choices=sorted(ARCHS), required=True)
    ap.add_argument("--shape", choices=sorted(SHAPES), default="tiny")
    ap.add_argument("--wtype", choices=tiny.WTYPES, default="F32")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    write_model(a.out, a.arch, a.shape, a.wtype, a.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
