#!/usr/bin/env python3
# Writes tiny random-weight GGUF models (llama, qwen2, qwen3, gemma2, gemma3, phi3, granite) so the C++
# forward pass can be checked on every attention layout and weight type against
# tools/reference_forward.py, without downloading a real model.
"""Usage: make_tiny_model.py --out FILE.gguf --variant gqa --wtype Q4_K [--tied]

Layout and metadata follow llama.cpp's conventions. Random weights need no
Q/K permutation: llama.cpp's converter permutes Hugging Face Q/K so that the
`llama` architecture can use "normal" RoPE (adjacent pairs); a random matrix
is equally random either way, so we simply declare the architecture and the
reader applies that architecture's RoPE mode (llama: normal, the others: NeoX).

Gemma norm weights are drawn around 0 as in Hugging Face checkpoints (Gemma's
RMSNorm scales by 1 + w) and written as 1 + w, as llama.cpp's converter does.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as QT

QK_K = 256

# name -> (architecture, n_head, n_head_kv, head_dim)
VARIANTS = {
    "mha": ("llama", 4, 4, 64),
    "gqa": ("llama", 8, 2, 32),
    "mqa": ("llama", 8, 1, 32),
    "qwen2": ("qwen2", 4, 2, 64),
    # q_dim (512) != n_embd: key_length is written and read.
    "qwen3": ("qwen3", 8, 2, 64),
    "gemma2": ("gemma2", 4, 2, 64),
    "gemma3": ("gemma3", 8, 2, 64),
    "phi3": ("phi3", 4, 2, 64),
    "granite": ("granite", 4, 2, 64),
}
ARCH_DEFAULTS = {  # architecture -> (rms eps, rope freq base, rope mode)
    "llama": (1e-5, 10000.0, "normal"),
    "qwen2": (1e-6, 1000000.0, "neox"),
    "qwen3": (1e-6, 1000000.0, "neox"),
    "gemma2": (1e-6, 10000.0, "neox"),
    "gemma3": (1e-6, 1000000.0, "neox"),
    "phi3": (1e-5, 10000.0, "neox"),
    "granite": (1e-6, 10000.0, "normal"),
}
# granite's multipliers: embedding, residual, logit (a divisor), attention
# (replaces 1/sqrt(head_dim)), far enough from 1 (and 1/8) that each matters.
GRANITE_SCALES = (0.3, 0.7, 2.0, 0.25)
GEMMA = ("gemma2", "gemma3")
# Layers per architecture: gemma3's pattern has one global layer in six.
N_LAYERS = {"gemma3": 6}
# Gemma: a window shorter than the tests' 16 tokens so the masking is
# exercised, and soft-caps small enough to bite on these models' logits
# (the real gemma2 values are 50 and 30).
SLIDING_WINDOW = 5
SOFTCAPS = {"gemma2": (3.0, 2.5)}  # (attention, final)
WTYPES = ["F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K", "MXFP4"]

N_EMBD = 256     # K of every matrix except ffn_down is a multiple of 256 (K-quants)
N_FF = 512
N_LAYER = 2
N_CTX = 128
QK_GAIN = 1.5
N_SPECIAL = 1    # <|endoftext|>, used as BOS and EOS
N_MERGES = 43    # 256 byte tokens + 43 merges + 1 special = 300 tokens


# ---------------------------------------------------------------- K-quants
# gguf-py can dequantize K-quants but not quantize them, so these encoders are
# written here from the block layouts its dequantizers read. They aim only at a
# valid, reasonably accurate encoding (a min/max fit per sub-block), not at
# llama.cpp's error-minimising search.

def _f16(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float16)


def _pack_k_scales(sc: np.ndarray, mn: np.ndarray) -> np.ndarray:
    """Packs 8 six-bit scales and 8 six-bit mins per block into 12 bytes."""
    out = np.zeros((sc.shape[0], 12), dtype=np.uint8)
    for j in range(4):
        out[:, j] = sc[:, j] | ((sc[:, j + 4] >> 4) << 6)
        out[:, j + 4] = mn[:, j] | ((mn[:, j + 4] >> 4) << 6)
        out[:, j + 8] = (sc[:, j + 4] & 0x0F) | ((mn[:, j + 4] & 0x0F) << 4)
    return out


def _affine_k(blocks: np.ndarray, qmax: int):
    """Fits x ~ d*sc_j*q - dmin*m_j on 8 sub-blocks of 32; returns the pieces."""
    sub = blocks.reshape(-1, 8, 32).astype(np.float32)
    lo = np.minimum(sub.min(axis=-1), 0.0)
    hi = sub.max(axis=-1)
    scale = (hi - lo) / qmax
    minv = -lo
    d = _f16(scale.max(axis=-1) / 63.0)
    dmin = _f16(minv.max(axis=-1) / 63.0)
    d32, dmin32 = d.astype(np.float32)[:, None], dmin.astype(np.float32)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        sc = np.where(d32 > 0, np.rint(scale / d32), 0).clip(0, 63).astype(np.uint8)
        mn = np.where(dmin32 > 0, np.rint(minv / dmin32), 0).clip(0, 63).astype(np.uint8)
        step = (d32 * sc)[..., None]
        offset = (dmin32 * mn)[..., None]
        q = np.where(step > 0, np.rint((sub + offset) / step), 0).clip(0, qmax).astype(np.uint8)
    return d, dmin, sc, mn, q.reshape(-1, QK_K)


def _nibbles_k(q: np.ndarray) -> np.ndarray:
    """Low 4 bits, two sub-blocks per 32 bytes: byte i of chunk c holds
    q[64c + i] (low nibble) and q[64c + 32 + i] (high nibble)."""
    q = (q & 0x0F).reshape(-1, 4, 2, 32)
    return (q[:, :, 0, :] | (q[:, :, 1, :] << 4)).reshape(-1, 128).astype(np.uint8)


def quantize_q4_k(blocks: np.ndarray) -> np.ndarray:
    d, dmin, sc, mn, q = _affine_k(blocks, 15)
    return np.concatenate([d.view(np.uint8).reshape(-1, 2), dmin.view(np.uint8).reshape(-1, 2),
                           _pack_k_scales(sc, mn), _nibbles_k(q)], axis=1)


def quantize_q5_k(blocks: np.ndarray) -> np.ndarray:
    d, dmin, sc, mn, q = _affine_k(blocks, 31)
    # Bit 4 of value 32*s + i goes to bit s of qh[i].
    high = ((q >> 4) & 1).reshape(-1, 8, 32).astype(np.uint8)
    qh = np.zeros((q.shape[0], 32), dtype=np.uint8)
    for s in range(8):
        qh |= high[:, s, :] << s
    return np.concatenate([d.view(np.uint8).reshape(-1, 2), dmin.view(np.uint8).reshape(-1, 2),
                           _pack_k_scales(sc, mn), qh, _nibbles_k(q)], axis=1)


def quantize_q6_k(blocks: np.ndarray) -> np.ndarray:
    sub = blocks.reshape(-1, 16, 16).astype(np.float32)
    scale = np.abs(sub).max(axis=-1) / 31.0
    d = _f16(scale.max(axis=-1) / 127.0)
    d32 = d.astype(np.float32)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        sc = np.where(d32 > 0, np.rint(scale / d32), 0).clip(-128, 127).astype(np.int8)
        step = (d32 * sc)[..., None]
        q = np.where(step != 0, np.rint(sub / step), 0).clip(-32, 31)
    q = (q + 32).astype(np.uint8).reshape(-1, 2, 128)  # two halves of 128 values
    # Half h: ql[64h + i] holds value 128h + i (low) and 128h + 64 + i (high);
    # qh[32h + i] bits 2s..2s+1 hold the top bits of value 128h + 32s + i.
    ql = (q[:, :, :64] & 0x0F) | ((q[:, :, 64:] & 0x0F) << 4)
    top = (q >> 4).reshape(-1, 2, 4, 32)
    qh = top[:, :, 0] | (top[:, :, 1] << 2) | (top[:, :, 2] << 4) | (top[:, :, 3] << 6)
    return np.concatenate([ql.reshape(-1, 128), qh.reshape(-1, 64).astype(np.uint8),
                           sc.view(np.uint8), d.view(np.uint8).reshape(-1, 2)], axis=1)


K_QUANTIZERS = {QT.Q4_K: quantize_q4_k, QT.Q5_K: quantize_q5_k, QT.Q6_K: quantize_q6_k}


def encode(w: np.ndarray, qtype: QT) -> np.ndarray:
    """Encodes a [rows, cols] float matrix as qtype; returns what add_tensor takes."""
    w = np.ascontiguousarray(w, dtype=np.float32)
    if qtype == QT.F32:
        return w
    if qtype == QT.F16:
        return w.astype(np.float16)
    if qtype in K_QUANTIZERS:
        rows, cols = w.shape
        assert cols % QK_K == 0, f"K-quants need rows of a multiple of {QK_K}, got {cols}"
        blocks = K_QUANTIZERS[qtype](w.reshape(-1, QK_K))
        return blocks.reshape(rows, -1)
    return gguf.quants.quantize(w, qtype)


# ---------------------------------------------------------------- vocab

def byte_tokens() -> list[str]:
    """GPT-2's byte-to-unicode alphabet: printable bytes map to themselves,
    the rest to code points from 256 up, in byte order."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


def vocab(control: tuple[str, ...] = ()) -> tuple[list[str], list[str], list[int]]:
    """Byte tokens, letter-pair merges, the `control` tokens, then
    <|endoftext|> (last, so its id is the vocabulary size - 1)."""
    tokens = byte_tokens()
    letters = "etaoinshrdlucmfwypvbgkjqxz"
    merges = []
    for a in letters:
        for b in letters:
            if len(merges) == N_MERGES:
                break
            if a != b:
                merges.append(f"{a} {b}")
                tokens.append(a + b)
    tokens += list(control) + ["<|endoftext|>"]
    n_control = len(control) + N_SPECIAL
    types = [1] * (len(tokens) - n_control) + [3] * n_control  # 1 normal, 3 control
    return tokens, merges, types


def add_vocab(w: gguf.GGUFWriter, control: tuple[str, ...] = ()) -> int:
    tokens, merges, types = vocab(control)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(len(tokens) - 1)
    w.add_eos_token_id(len(tokens) - 1)
    return len(tokens)


# ---------------------------------------------------------------- model

def random_tensors(rng: np.random.Generator, arch: str, n_head: int, n_kv: int, hd: int,
                   n_vocab: int, tied: bool, n_layer: int = N_LAYER) -> dict[str, np.ndarray]:
    """Weights scaled so activations stay O(1): matrices ~ N(0, 1/fan_in),
    embeddings ~ N(0, 1), norm weights near 1, biases small. Q and K are drawn
    QK_GAIN times larger so attention scores are peaked (std ~ QK_GAIN^2):
    with flat attention, RoPE or head-mapping mistakes barely move logits."""
    def mat(n_out: int, n_in: int) -> np.ndarray:
        return rng.standard_normal((n_out, n_in)) / np.sqrt(n_in)

    def norm(n: int = N_EMBD) -> np.ndarray:  # the scale the GGUF stores (gemma: 1 + w)
        return 1.0 + 0.1 * rng.standard_normal(n)

    # Tied: the embedding is also the output matrix, so it takes the matrix
    # scale (1/sqrt(n_embd)) to keep logits O(1); RMSNorm rescales its input side.
    # Gemma scales embeddings by sqrt(n_embd) on input, so its tied table
    # feeds the first layer O(1) activations too.
    embd_scale = 1.0 / np.sqrt(N_EMBD) if tied else 1.0
    t = {"token_embd.weight": embd_scale * rng.standard_normal((n_vocab, N_EMBD))}
    for i in range(n_layer):
        p = f"blk.{i}."
        t[p + "attn_norm.weight"] = norm()
        t[p + "attn_q.weight"] = QK_GAIN * mat(n_head * hd, N_EMBD)
        t[p + "attn_k.weight"] = QK_GAIN * mat(n_kv * hd, N_EMBD)
        t[p + "attn_v.weight"] = mat(n_kv * hd, N_EMBD)
        if arch == "qwen2":
            t[p + "attn_q.bias"] = 0.1 * rng.standard_normal(n_head * hd)
            t[p + "attn_k.bias"] = 0.1 * rng.standard_normal(n_kv * hd)
            t[p + "attn_v.bias"] = 0.1 * rng.standard_normal(n_kv * hd)
        if arch in ("qwen3", "gemma3"):
            # Per-head norms; QK_GAIN on them keeps the normed Q/K scores peaked.
            t[p + "attn_q_norm.weight"] = QK_GAIN * norm(hd)
            t[p + "attn_k_norm.weight"] = QK_GAIN * norm(hd)
        t[p + "attn_output.weight"] = mat(N_EMBD, n_head * hd)
        if arch in GEMMA:
            t[p + "post_attention_norm.weight"] = norm()
        t[p + "ffn_norm.weight"] = norm()
        t[p + "ffn_gate.weight"] = mat(N_FF, N_EMBD)
        t[p + "ffn_up.weight"] = mat(N_FF, N_EMBD)
        t[p + "ffn_down.weight"] = mat(N_EMBD, N_FF)
        if arch in GEMMA:
            t[p + "post_ffw_norm.weight"] = norm()
    if arch == "phi3":  # llama.cpp's phi3 layout: fused QKV rows, fused gate/up rows
        for i in range(n_layer):
            p = f"blk.{i}."
            t[p + "attn_qkv.weight"] = np.concatenate([t.pop(p + f"attn_{x}.weight") for x in "qkv"])
            t[p + "ffn_up.weight"] = np.concatenate([t.pop(p + "ffn_gate.weight"), t.pop(p + "ffn_up.weight")])
    t["output_norm.weight"] = norm()
    if not tied:
        t["output.weight"] = mat(n_vocab, N_EMBD)
    return t


def write_model(out: str, variant: str, wtype: str, rope: str | None = None, tied: bool = False,
                seed: int = 0, rope_scale: float | None = None, freq_base: float | None = None,
                with_vocab: bool = True, rope_scaling: str = "linear", rope_orig_ctx: int = 0,
                rope_freqs: bool = False, control_tokens: tuple[str, ...] = ()) -> None:
    arch, n_head, n_kv, hd = VARIANTS[variant]
    eps, default_base, rope_mode = ARCH_DEFAULTS[arch]
    if rope is not None and rope != rope_mode:
        # GGUF has no rope-mode key: llama.cpp derives it from the architecture.
        raise ValueError(f"architecture {arch} uses {rope_mode} RoPE; {rope} cannot be expressed")
    qtype = QT[wtype]
    w = gguf.GGUFWriter(out, arch)
    w.add_name(f"tessera-tiny-{variant}-{wtype}")
    w.add_context_length(N_CTX)
    w.add_embedding_length(N_EMBD)
    n_layer = N_LAYERS.get(arch, N_LAYER)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_layer_norm_rms_eps(eps)
    w.add_rope_freq_base(freq_base if freq_base is not None else default_base)
    w.add_rope_dimension_count(hd)
    if n_head * hd != N_EMBD:
        w.add_key_length(hd)
        w.add_value_length(hd)
    if arch == "granite":
        for add, value in zip((w.add_embedding_scale, w.add_residual_scale, w.add_logit_scale,
                               w.add_attention_scale), GRANITE_SCALES):
            add(value)
    if arch in GEMMA:
        w.add_sliding_window(SLIDING_WINDOW)
        if arch in SOFTCAPS:
            w.add_attn_logit_softcapping(SOFTCAPS[arch][0])
            w.add_final_logit_softcapping(SOFTCAPS[arch][1])
    if rope_scale is not None:
        kind = {"linear": gguf.RopeScalingType.LINEAR, "yarn": gguf.RopeScalingType.YARN}[rope_scaling]
        w.add_rope_scaling_type(kind)
        w.add_rope_scaling_factor(rope_scale)
        if rope_orig_ctx:
            w.add_rope_scaling_orig_ctx_len(rope_orig_ctx)
    if rope_freqs:
        # Llama 3 style per-dimension frequency divisors, stored as a tensor.
        factors = np.random.default_rng(seed + 99).uniform(1.0, 8.0, hd // 2).astype(np.float32)
        w.add_tensor("rope_freqs.weight", factors)
    n_vocab = add_vocab(w, control_tokens) if with_vocab else N_MERGES + 256 + N_SPECIAL
    rng = np.random.default_rng(seed)
    for name, value in random_tensors(rng, arch, n_head, n_kv, hd, n_vocab, tied, n_layer).items():
        if value.ndim == 1:  # norms and biases stay F32
            w.add_tensor(name, value.astype(np.float32))
        else:
            w.add_tensor(name, encode(value, qtype), raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--variant", choices=sorted(VARIANTS), default="gqa")
    ap.add_argument("--wtype", choices=WTYPES, default="F32")
    ap.add_argument("--rope", choices=["neox", "normal"],
                    help="must match the architecture (llama: normal, the others: neox)")
    ap.add_argument("--rope-scale", type=float, help="write linear RoPE scaling with this factor")
    ap.add_argument("--rope-scaling", choices=["linear", "yarn"], default="linear",
                    help="kind of scaling written with --rope-scale")
    ap.add_argument("--rope-orig-ctx", type=int, default=0, help="rope.scaling.original_context_length (YaRN)")
    ap.add_argument("--rope-freqs", action="store_true", help="write a rope_freqs.weight tensor (Llama 3 scaling)")
    ap.add_argument("--freq-base", type=float, help="override rope.freq_base")
    ap.add_argument("--tied", action="store_true", help="no output.weight; reuse token_embd")
    ap.add_argument("--no-vocab", action="store_true", help="omit the tokenizer metadata")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--control-token", action="append", default=[],
                    help="add a control token with this text before <|endoftext|> (repeatable)")
    a = ap.parse_args(argv)
    try:
        write_model(a.out, a.variant, a.wtype, a.rope, a.tied, a.seed, a.rope_scale, a.freq_base,
                    not a.no_vocab, a.rope_scaling, a.rope_orig_ctx, a.rope_freqs, tuple(a.control_token))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
