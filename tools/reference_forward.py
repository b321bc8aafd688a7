#!/usr/bin/env python3
# An independent float64 NumPy forward pass for llama, qwen2, qwen3, gemma2,
# gemma3 and phi3 GGUF models and the mixture-of-experts qwen2moe, qwen3moe,
# olmoe, mixtral (llama with experts), granite and granitemoe, written from
# the Hugging Face model definitions (modeling_llama/qwen2/qwen3/gemma2/
# gemma3/phi3/qwen2_moe/qwen3_moe/olmoe/mixtral/granite/granitemoe.py). It shares no code with the C++ engine, so agreement between the two
# on tiny random models is evidence that both implement the same network.
"""Usage: reference_forward.py MODEL.gguf --tokens 1,5,9 [--out logits.npy]

Prints (or saves) logits for every position, shape [n_tokens, n_vocab].
Weights are read with gguf.GGUFReader and dequantized with gguf.quants.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, replace

import numpy as np
import gguf
from gguf import GGMLQuantizationType as QT

# as llama.cpp assigns per architecture
ROPE_MODE = {"llama": "normal", "qwen2": "neox", "qwen3": "neox", "gemma2": "neox", "gemma3": "neox",
             "phi3": "neox", "qwen2moe": "neox", "qwen3moe": "neox", "olmoe": "neox",
             "granite": "normal", "granitemoe": "normal"}
# Whether the top-k routing weights are renormalised to sum to one when the
# file has no expert_weights_norm key (HF norm_topk_prob; Mixtral's softmax
# over the chosen logits is the same thing), as llama.cpp reads these files.
MOE_NORM_TOPK = {"llama": True, "qwen3moe": True, "qwen2moe": False, "olmoe": False, "granitemoe": True}
GRANITE = ("granite", "granitemoe")
GEMMA = ("gemma2", "gemma3")
# Gemma3's local (sliding-window) layers use this RoPE base, unscaled
# (HF: rope_local_base_freq); its global layers use rope.freq_base.
GEMMA3_LOCAL_BASE = 10000.0
ACT_ROUNDING = {"none": None, "f16": QT.F16, "bf16": QT.BF16, "q8_0": QT.Q8_0}


@dataclass
class Config:
    arch: str
    n_embd: int
    n_layer: int
    n_head: int
    n_head_kv: int
    head_dim: int
    rope_dims: int
    eps: float
    freq_base: float
    freq_scale: float  # 1 / scaling factor (linear or YaRN)
    rope_mode: str
    yarn: bool = False
    n_ctx_orig: int = 0
    freq_factors: np.ndarray | None = None  # [rope_dims/2] divisors (rope_freqs.weight)
    # Gemma only.
    sliding_window: int = 0
    layer_pattern: int = 0       # HF sliding_window_pattern: layer i is global iff (i + 1) % pattern == 0
    attn_softcap: float = 0.0    # 0: none
    final_softcap: float = 0.0
    query_pre_attn_scalar: float = 0.0
    # Mixture of experts only.
    n_expert_used: int = 0
    norm_topk: bool = False
    shared_expert: bool = True   # qwen2moe's (tests turn it off to show it matters)
    # Granite's multipliers (modeling_granite: embedding_multiplier,
    # residual_multiplier, logits_scaling, attention_multiplier); 0: none.
    embedding_scale: float = 0.0
    residual_scale: float = 0.0
    logit_scale: float = 0.0
    attn_scale: float = 0.0


class Model:
    def __init__(self, path: str, act_round: str = "none"):
        self.reader = gguf.GGUFReader(path)
        self.tensors = {t.name: t for t in self.reader.tensors}
        self.cfg = self._read_config()
        if act_round not in ACT_ROUNDING:
            raise ValueError(f"act_round must be one of {sorted(ACT_ROUNDING)}")
        self.act_round = ACT_ROUNDING[act_round]
        self._cache: dict[str, np.ndarray] = {}
        self.routing_gaps: list[float] | None = None  # set by routing_margin

    def field(self, key: str, default=None):
        f = self.reader.fields.get(key)
        if f is None:
            if default is None:
                raise KeyError(f"missing metadata key {key}")
            return default
        return f.contents()

    def _read_config(self) -> Config:
        arch = self.field("general.architecture")
        if arch not in ROPE_MODE:
            raise ValueError(f"unsupported architecture {arch}")
        n_embd = int(self.field(f"{arch}.embedding_length"))
        n_head = int(self.field(f"{arch}.attention.head_count"))
        head_dim = int(self.field(f"{arch}.attention.key_length", n_embd // n_head))
        scale_type = self.field(f"{arch}.rope.scaling.type", "none")
        factor = float(self.field(f"{arch}.rope.scaling.factor", 1.0))
        if scale_type not in ("none", "linear", "yarn"):
            raise ValueError(f"rope scaling {scale_type} is not implemented in the reference")
        n_ctx_train = int(self.field(f"{arch}.context_length", 4096))
        freqs = self.tensors.get("rope_freqs.weight")
        n_layer = int(self.field(f"{arch}.block_count"))
        gemma = {}
        if arch in GEMMA:
            # GGUF carries no query_pre_attn_scalar: HF configs set it to
            # head_dim except for the 27B models (n_embd / n_head).
            big = (arch, n_layer) in (("gemma2", 46), ("gemma3", 62))
            gemma = dict(
                sliding_window=int(self.field(f"{arch}.attention.sliding_window")),
                layer_pattern=int(self.field(f"{arch}.attention.sliding_window_pattern",
                                             2 if arch == "gemma2" else 6)),
                attn_softcap=float(self.field(f"{arch}.attn_logit_softcapping", 0.0)),
                final_softcap=float(self.field(f"{arch}.final_logit_softcapping", 0.0)),
                query_pre_attn_scalar=float(n_embd // n_head if big else head_dim))
        moe = {}
        if arch in MOE_NORM_TOPK and int(self.field(f"{arch}.expert_count", 0)) > 0:
            moe = dict(n_expert_used=int(self.field(f"{arch}.expert_used_count")),
                       norm_topk=bool(self.field(f"{arch}.expert_weights_norm", MOE_NORM_TOPK[arch])))
        granite = {}
        if arch in GRANITE:
            granite = dict(embedding_scale=float(self.field(f"{arch}.embedding_scale", 1.0)),
                           residual_scale=float(self.field(f"{arch}.residual_scale", 1.0)),
                           logit_scale=float(self.field(f"{arch}.logit_scale", 1.0)),
                           attn_scale=float(self.field(f"{arch}.attention.scale", head_dim ** -0.5)))
        return Config(
            arch=arch, n_embd=n_embd, n_layer=n_layer,
            n_head=n_head, n_head_kv=int(self.field(f"{arch}.attention.head_count_kv", n_head)),
            head_dim=head_dim, rope_dims=int(self.field(f"{arch}.rope.dimension_count", head_dim)),
            eps=float(self.field(f"{arch}.attention.layer_norm_rms_epsilon")),
            freq_base=float(self.field(f"{arch}.rope.freq_base", 10000.0)),
            freq_scale=1.0 / factor if scale_type in ("linear", "yarn") and factor > 0 else 1.0,
            rope_mode=ROPE_MODE[arch], yarn=scale_type == "yarn",
            n_ctx_orig=int(self.field(f"{arch}.rope.scaling.original_context_length", n_ctx_train)),
            freq_factors=None if freqs is None else np.array(freqs.data, dtype=np.float64), **gemma, **moe, **granite)

    def has(self, name: str) -> bool:
        return name in self.tensors

    def weight(self, name: str) -> np.ndarray:
        """Dequantized tensor in numpy order ([n_out, n_in] for matrices), float64."""
        if name not in self._cache:
            t = self.tensors[name]
            data = gguf.quants.dequantize(t.data, QT(t.tensor_type))
            shape = tuple(int(d) for d in reversed(t.shape))
            self._cache[name] = np.asarray(data, dtype=np.float64).reshape(shape)
        return self._cache[name]

    def linear(self, x: np.ndarray, name: str, expert: int | None = None) -> np.ndarray:
        """x @ W^T; for a 3-D expert tensor, W is expert `expert`'s slice."""
        if self.act_round is not None:
            x = round_through(x, self.act_round)
        w = self.weight(name)
        return x @ (w if expert is None else w[expert]).T


def round_through(x: np.ndarray, qtype: QT) -> np.ndarray:
    """Round-trips matmul inputs through qtype, the way an engine that converts
    activations before a matmul sees them (ggml: F16/BF16 weights take F16/BF16
    activations, quantized weights take Q8 activations). Used only to size the
    error such a path adds, never for the reference logits themselves."""
    q = gguf.quants.quantize(x.astype(np.float32), qtype)
    return gguf.quants.dequantize(q, qtype).astype(np.float64).reshape(x.shape)


def rms_norm(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope_angles(positions: np.ndarray, cfg: Config):
    """Angles [n_tokens, rope_dims/2] and the magnitude scale of cos/sin.
    Pair i's base frequency is freq_base^(-2i/d), divided by freq_factors[i]
    when the model has them. Linear scaling multiplies every angle by
    freq_scale. YaRN (arXiv 2309.00071) keeps high-frequency pairs as they are,
    interpolates low-frequency ones by freq_scale, ramps linearly between the
    pair indices where a pair turns beta_fast=32 and beta_slow=1 times over the
    original context (rounded outward to whole pairs, as GGUF runtimes do), and
    scales cos/sin by 1 + 0.1 ln(1/freq_scale)."""
    d = cfg.rope_dims
    inv_freq = cfg.freq_base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    if cfg.freq_factors is not None:
        inv_freq = inv_freq / cfg.freq_factors
    pos = positions.astype(np.float64)[:, None]
    if not cfg.yarn:
        return pos * cfg.freq_scale * inv_freq[None, :], 1.0

    def pair_where_turns(n_rot):  # pair index whose wavelength is n_ctx_orig / n_rot
        return d * np.log(cfg.n_ctx_orig / (n_rot * 2 * np.pi)) / (2 * np.log(cfg.freq_base))

    low = max(0.0, np.floor(pair_where_turns(32.0)))
    high = min(d - 1.0, np.ceil(pair_where_turns(1.0)))
    i = np.arange(d // 2, dtype=np.float64)
    keep = 1.0 - np.clip((i - low) / max(0.001, high - low), 0.0, 1.0)  # 1: extrapolate
    angle_extrap = pos * inv_freq[None, :]
    angle = angle_extrap * (cfg.freq_scale * (1.0 - keep) + keep)[None, :]
    return angle, 1.0 + 0.1 * np.log(1.0 / cfg.freq_scale)


def rope(x: np.ndarray, positions: np.ndarray, cfg: Config) -> np.ndarray:
    """x: [n_tokens, n_heads, head_dim]. Rotates the first rope_dims dims.
    normal: pairs (2i, 2i+1); neox: pairs (i, i + rope_dims/2)."""
    d = cfg.rope_dims
    angle, mscale = rope_angles(positions, cfg)
    cos, sin = mscale * np.cos(angle)[:, None, :], mscale * np.sin(angle)[:, None, :]
    out = x.copy()
    if cfg.rope_mode == "normal":
        a, b = x[..., 0:d:2], x[..., 1:d:2]
        out[..., 0:d:2] = a * cos - b * sin
        out[..., 1:d:2] = a * sin + b * cos
    else:
        a, b = x[..., : d // 2], x[..., d // 2: d]
        out[..., : d // 2] = a * cos - b * sin
        out[..., d // 2: d] = a * sin + b * cos
    return out


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Causal attention. q: [T, n_head, hd]; k, v: [T, n_head_kv, hd]. Query
    head h reads kv head h // (n_head / n_head_kv) (GQA; MQA when n_head_kv = 1)."""
    n_tok, n_head, hd = q.shape
    group = n_head // k.shape[1]
    k = np.repeat(k, group, axis=1)
    v = np.repeat(v, group, axis=1)
    scores = np.einsum("thd,shd->hts", q, k) / np.sqrt(hd)
    mask = np.triu(np.ones((n_tok, n_tok), dtype=bool), k=1)
    scores[:, mask] = -np.inf
    scores -= scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(axis=-1, keepdims=True)
    return np.einsum("hts,shd->thd", p, v).reshape(n_tok, n_head * hd)


def layer(m: Model, i: int, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    cfg, p = m.cfg, f"blk.{i}."
    h = rms_norm(x, m.weight(p + "attn_norm.weight"), cfg.eps)
    proj = {}
    if cfg.arch == "phi3":  # Phi3Attention's qkv_proj: query, key and value rows in that order
        qkv = m.linear(h, p + "attn_qkv.weight")
        q_dim, kv_dim = cfg.n_head * cfg.head_dim, cfg.n_head_kv * cfg.head_dim
        proj = dict(q=qkv[:, :q_dim], k=qkv[:, q_dim:q_dim + kv_dim], v=qkv[:, q_dim + kv_dim:])
    for name in ("q", "k", "v") if not proj else ():
        y = m.linear(h, p + f"attn_{name}.weight")
        if m.has(p + f"attn_{name}.bias"):
            y = y + m.weight(p + f"attn_{name}.bias")
        proj[name] = y
    n_tok = x.shape[0]
    if cfg.arch == "olmoe":  # OlmoeAttention: q_norm / k_norm over the whole projections
        proj["q"] = rms_norm(proj["q"], m.weight(p + "attn_q_norm.weight"), cfg.eps)
        proj["k"] = rms_norm(proj["k"], m.weight(p + "attn_k_norm.weight"), cfg.eps)
    q = proj["q"].reshape(n_tok, cfg.n_head, cfg.head_dim)
    k = proj["k"].reshape(n_tok, cfg.n_head_kv, cfg.head_dim)
    if cfg.arch in ("qwen3", "qwen3moe"):  # q_norm / k_norm: RMSNorm over each head, before RoPE
        q = rms_norm(q, m.weight(p + "attn_q_norm.weight"), cfg.eps)
        k = rms_norm(k, m.weight(p + "attn_k_norm.weight"), cfg.eps)
    q = rope(q, positions, cfg)
    k = rope(k, positions, cfg)
    v = proj["v"].reshape(n_tok, cfg.n_head_kv, cfg.head_dim)
    if cfg.attn_scale:  # granite: scores scaled by attention_multiplier instead of 1/sqrt(head_dim)
        q = q * (cfg.attn_scale * np.sqrt(cfg.head_dim))
    residual = cfg.residual_scale or 1.0  # granite scales each branch before adding it
    x = x + residual * m.linear(attention(q, k, v), p + "attn_output.weight")
    h = rms_norm(x, m.weight(p + "ffn_norm.weight"), cfg.eps)
    if m.has(p + "ffn_gate_inp.weight"):
        return x + residual * moe_ffn(m, i, h)
    if cfg.arch == "phi3":  # Phi3MLP's gate_up_proj, chunked in two: gate, then up
        gate, up = np.split(m.linear(h, p + "ffn_up.weight"), 2, axis=-1)
    else:
        gate = m.linear(h, p + "ffn_gate.weight")
        up = m.linear(h, p + "ffn_up.weight")
    silu = gate / (1.0 + np.exp(-gate))
    return x + residual * m.linear(silu * up, p + "ffn_down.weight")


# ------------------------------------------------------------ mixture of experts

def silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


def moe_ffn(m: Model, i: int, h: np.ndarray) -> np.ndarray:
    """The sparse MoE block of modeling_qwen2_moe / qwen3_moe / olmoe /
    mixtral: softmax over the router logits, the top n_expert_used experts
    per token (ties to the lower id), their probabilities as weights
    (renormalised when norm_topk), each expert a SwiGLU FFN. qwen2moe adds
    sigmoid(h . gate_inp_shexp) times its shared expert."""
    cfg, p = m.cfg, f"blk.{i}."
    logits = m.linear(h, p + "ffn_gate_inp.weight")
    probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    top = np.argsort(-probs, axis=-1, kind="stable")[:, :cfg.n_expert_used]
    weights = np.take_along_axis(probs, top, axis=-1)
    if m.routing_gaps is not None:
        ranked = -np.sort(-probs, axis=-1)
        m.routing_gaps.append((ranked[:, cfg.n_expert_used - 1] - ranked[:, cfg.n_expert_used]).min())
    if cfg.norm_topk:
        weights = weights / weights.sum(axis=-1, keepdims=True)
    out = np.zeros_like(h)
    for e in np.unique(top):
        rows, rank = np.nonzero(top == e)
        x = h[rows]
        y = silu(m.linear(x, p + "ffn_gate_exps.weight", e)) * m.linear(x, p + "ffn_up_exps.weight", e)
        out[rows] += weights[rows, rank][:, None] * m.linear(y, p + "ffn_down_exps.weight", e)
    if cfg.shared_expert and m.has(p + "ffn_gate_inp_shexp.weight"):
        gate = 1.0 / (1.0 + np.exp(-(h @ m.weight(p + "ffn_gate_inp_shexp.weight").reshape(-1))))
        y = silu(m.linear(h, p + "ffn_gate_shexp.weight")) * m.linear(h, p + "ffn_up_shexp.weight")
        out += gate[:, None] * m.linear(y, p + "ffn_down_shexp.weight")
    return out


def routing_margin(m: Model, tokens: list[int]) -> float:
    """The smallest gap, over every token and layer, between the router
    probability of the last expert chosen and the first one left out: how
    far the routing is from a near-tie that a rounding difference could flip."""
    m.routing_gaps = []
    try:
        forward(m, tokens)
        return float(min(m.routing_gaps))
    finally:
        m.routing_gaps = None


# ------------------------------------------------------------------ gemma

def gemma_rms_norm(x: np.ndarray, stored: np.ndarray, eps: float) -> np.ndarray:
    """Gemma's RMSNorm scales by (1 + w). llama.cpp's converter stores 1 + w
    in the GGUF, so w is the stored value minus one."""
    w = stored - 1.0
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * (1.0 + w)


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def gemma_attention(q, k, v, scaling: float, window: int, softcap: float) -> np.ndarray:
    """Eager attention of modeling_gemma2/3: scores * scaling, optional
    tanh soft-cap, causal mask, and for sliding layers also the mask of keys
    with q_pos - k_pos >= window."""
    n_tok, n_head, hd = q.shape
    group = n_head // k.shape[1]
    k = np.repeat(k, group, axis=1)
    v = np.repeat(v, group, axis=1)
    scores = np.einsum("thd,shd->hts", q, k) * scaling
    if softcap:
        scores = softcap * np.tanh(scores / softcap)
    qpos, kpos = np.arange(n_tok)[:, None], np.arange(n_tok)[None, :]
    masked = kpos > qpos
    if window:
        masked |= qpos - kpos >= window
    scores[:, masked] = -np.inf
    scores -= scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(axis=-1, keepdims=True)
    return np.einsum("hts,shd->thd", p, v).reshape(n_tok, n_head * hd)


def gemma_layer(m: Model, i: int, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Gemma2DecoderLayer / Gemma3DecoderLayer."""
    cfg, p = m.cfg, f"blk.{i}."
    sliding = (i + 1) % cfg.layer_pattern != 0
    rope_cfg = cfg
    if sliding and cfg.arch == "gemma3":
        rope_cfg = replace(cfg, freq_base=GEMMA3_LOCAL_BASE, freq_scale=1.0, yarn=False, freq_factors=None)
    h = gemma_rms_norm(x, m.weight(p + "attn_norm.weight"), cfg.eps)
    n_tok = x.shape[0]
    q = m.linear(h, p + "attn_q.weight").reshape(n_tok, cfg.n_head, cfg.head_dim)
    k = m.linear(h, p + "attn_k.weight").reshape(n_tok, cfg.n_head_kv, cfg.head_dim)
    v = m.linear(h, p + "attn_v.weight").reshape(n_tok, cfg.n_head_kv, cfg.head_dim)
    if cfg.arch == "gemma3":
        q = gemma_rms_norm(q, m.weight(p + "attn_q_norm.weight"), cfg.eps)
        k = gemma_rms_norm(k, m.weight(p + "attn_k_norm.weight"), cfg.eps)
    q, k = rope(q, positions, rope_cfg), rope(k, positions, rope_cfg)
    a = gemma_attention(q, k, v, cfg.query_pre_attn_scalar ** -0.5, cfg.sliding_window if sliding else 0,
                        cfg.attn_softcap)
    a = m.linear(a, p + "attn_output.weight")
    x = x + gemma_rms_norm(a, m.weight(p + "post_attention_norm.weight"), cfg.eps)
    h = gemma_rms_norm(x, m.weight(p + "ffn_norm.weight"), cfg.eps)
    f = gelu_tanh(m.linear(h, p + "ffn_gate.weight")) * m.linear(h, p + "ffn_up.weight")
    f = m.linear(f, p + "ffn_down.weight")
    return x + gemma_rms_norm(f, m.weight(p + "post_ffw_norm.weight"), cfg.eps)


def hidden_states(m: Model, tokens: list[int]) -> np.ndarray:
    """Final hidden states [n_tokens, n_embd] (after the output norm, what the
    LM head reads and embeddings pool) for tokens at positions 0..n_tokens-1."""
    embd = m.weight("token_embd.weight")
    if any(t < 0 or t >= embd.shape[0] for t in tokens):
        raise ValueError(f"token ids must be in [0, {embd.shape[0]})")
    x = embd[np.asarray(tokens)]
    positions = np.arange(len(tokens))
    gemma = m.cfg.arch in GEMMA
    if gemma:
        x = x * np.sqrt(m.cfg.n_embd)  # the embedding normalizer
    if m.cfg.embedding_scale:
        x = x * m.cfg.embedding_scale
    for i in range(m.cfg.n_layer):
        x = gemma_layer(m, i, x, positions) if gemma else layer(m, i, x, positions)
    norm = gemma_rms_norm if gemma else rms_norm
    return norm(x, m.weight("output_norm.weight"), m.cfg.eps)


def forward(m: Model, tokens: list[int]) -> np.ndarray:
    """Logits [n_tokens, n_vocab] for tokens at positions 0..n_tokens-1."""
    out = "output.weight" if m.has("output.weight") else "token_embd.weight"
    logits = m.linear(hidden_states(m, tokens), out)
    if m.cfg.final_softcap:
        logits = m.cfg.final_softcap * np.tanh(logits / m.cfg.final_softcap)
    if m.cfg.logit_scale:
        logits = logits / m.cfg.logit_scale
    return logits


def reference_logits(path: str, tokens: list[int], act_round: str = "none") -> np.ndarray:
    return forward(Model(path, act_round), tokens)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--tokens", required=True, help="comma- or space-separated token ids")
    ap.add_argument("--out", help="save logits as .npy instead of printing them")
    ap.add_argument("--act-round", choices=sorted(ACT_ROUNDING), default="none",
                    help="round matmul inputs through this type (sizes the error of such a path)")
    a = ap.parse_args(argv)
    tokens = [int(t) for t in a.tokens.replace(",", " ").split()]
    logits = reference_logits(a.model, tokens, a.act_round)
    if a.out:
        np.save(a.out, logits)
    else:
        for row in logits:
            print(" ".join(f"{v:.6g}" for v in row))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
