#!/usr/bin/env python3
# Tiny mixture-of-experts models in Hugging Face form and their GGUF
# conversion, shared by tools/make_hf_moe_goldens.py (which runs them through
# `transformers` and stores the logits in tests/golden/moe/hf_logits.npz) and
# tests/e2e/test_moe_hf.py (which rebuilds the same weights without torch,
# converts them as llama.cpp's convert_hf_to_gguf.py lays them out, and
# checks tessera's logits against the stored ones). Needs numpy and gguf.
# gpt-oss is here too: attention sinks, every other layer windowed (window
# smaller than the prompts), YaRN, biased router and experts, the clamped
# SwiGLU (expert weights large enough that the clamp acts), experts in F32 or
# in MXFP4 (quantized by gguf-py, as llama.cpp's converter stores them).
from __future__ import annotations

import numpy as np
import gguf

VOCAB, HIDDEN, LAYERS, HEADS, KV_HEADS, HEAD_DIM = 64, 64, 2, 4, 2, 16
EXPERTS, USED, EXPERT_FF, SHARED_FF = 4, 2, 32, 48
EPS, THETA = 1e-6, 10000.0
PROMPTS = [[1, 5, 9, 23, 42, 7, 3, 60, 25, 17, 33], [63, 0, 12, 12, 12, 8, 42], [7, 50, 2, 31, 44, 9, 18, 27, 5]]
# Granite's multipliers (embedding, residual, logits divisor, attention).
GRANITE = dict(embedding_multiplier=0.3, residual_multiplier=0.7, logits_scaling=2.0, attention_multiplier=0.25)
# gpt-oss's window (shorter than every prompt) and RoPE (its real YaRN, with
# Hugging Face's unrounded ramp: "truncate": false).
GPT_OSS_WINDOW, GPT_OSS_THETA = 4, 150000.0
GPT_OSS_YARN = dict(rope_type="yarn", rope_theta=GPT_OSS_THETA, factor=32.0, beta_fast=32.0, beta_slow=1.0,
                    truncate=False, original_max_position_embeddings=4096)

# GGUF architecture of each model, and the transformers class that defines it.
ARCHS = {
    "qwen3moe": ("qwen3moe", "Qwen3MoeForCausalLM"),
    "qwen2moe": ("qwen2moe", "Qwen2MoeForCausalLM"),
    "olmoe": ("olmoe", "OlmoeForCausalLM"),
    "mixtral": ("llama", "MixtralForCausalLM"),
    "granitemoe": ("granitemoe", "GraniteMoeForCausalLM"),
    "gpt-oss": ("gpt-oss", "GptOssForCausalLM"),
}


def hf_config(arch: str) -> dict:
    """The transformers config of the tiny model (an XConfig(**this))."""
    c = dict(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
             num_key_value_heads=KV_HEADS, rms_norm_eps=EPS, rope_theta=THETA, max_position_embeddings=128,
             tie_word_embeddings=False)
    if arch == "qwen3moe":
        c.update(head_dim=HEAD_DIM, intermediate_size=4 * HIDDEN, moe_intermediate_size=EXPERT_FF,
                 num_experts=EXPERTS, num_experts_per_tok=USED, norm_topk_prob=True)
    elif arch == "qwen2moe":
        c.update(intermediate_size=4 * HIDDEN, moe_intermediate_size=EXPERT_FF, num_experts=EXPERTS,
                 num_experts_per_tok=USED, shared_expert_intermediate_size=SHARED_FF, norm_topk_prob=False)
    elif arch == "olmoe":
        c.update(intermediate_size=EXPERT_FF, num_experts=EXPERTS, num_experts_per_tok=USED, norm_topk_prob=False)
    elif arch == "mixtral":
        c.update(intermediate_size=EXPERT_FF, num_local_experts=EXPERTS, num_experts_per_tok=USED)
    elif arch == "granitemoe":
        c.update(intermediate_size=EXPERT_FF, num_local_experts=EXPERTS, num_experts_per_tok=USED, **GRANITE)
    elif arch == "gpt-oss":
        del c["rope_theta"]  # in rope_parameters; max_position_embeddings: YaRN's 32 x 4096
        c.update(max_position_embeddings=131072, head_dim=HEAD_DIM, intermediate_size=EXPERT_FF,
                 num_local_experts=EXPERTS, num_experts_per_tok=USED, sliding_window=GPT_OSS_WINDOW,
                 rope_parameters=dict(GPT_OSS_YARN), attention_bias=True)
    return c


def random_weights(arch: str, seed: int = 0) -> dict[str, np.ndarray]:
    """Weights under the transformers names, float32 values that float16
    holds exactly. Matrices ~ N(0, 1/fan_in), Q/K and the router a little
    larger (peaked attention, decisive routing), norms near 1."""
    rng = np.random.default_rng(seed)

    def mat(n_out, n_in, gain=1.0):
        return (gain * rng.standard_normal((n_out, n_in)) / np.sqrt(n_in)).astype(np.float16).astype(np.float32)

    def norm(n):
        return (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float16).astype(np.float32)

    q_dim, kv_dim = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    if arch == "gpt-oss":
        return gpt_oss_weights(rng, mat, norm)
    w = {"model.embed_tokens.weight": mat(VOCAB, HIDDEN, np.sqrt(HIDDEN))}
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = norm(HIDDEN)
        w[p + "self_attn.q_proj.weight"] = mat(q_dim, HIDDEN, 1.5)
        w[p + "self_attn.k_proj.weight"] = mat(kv_dim, HIDDEN, 1.5)
        w[p + "self_attn.v_proj.weight"] = mat(kv_dim, HIDDEN)
        w[p + "self_attn.o_proj.weight"] = mat(HIDDEN, q_dim)
        if arch == "qwen2moe":
            for x, n in (("q", q_dim), ("k", kv_dim), ("v", kv_dim)):
                w[p + f"self_attn.{x}_proj.bias"] = (0.1 * rng.standard_normal(n)).astype(np.float16).astype(np.float32)
        if arch == "qwen3moe":
            w[p + "self_attn.q_norm.weight"] = norm(HEAD_DIM)
            w[p + "self_attn.k_norm.weight"] = norm(HEAD_DIM)
        if arch == "olmoe":
            w[p + "self_attn.q_norm.weight"] = norm(q_dim)
            w[p + "self_attn.k_norm.weight"] = norm(kv_dim)
        w[p + "post_attention_layernorm.weight"] = norm(HIDDEN)
        router = mat(EXPERTS, HIDDEN, 2.0)
        experts = [(mat(EXPERT_FF, HIDDEN), mat(EXPERT_FF, HIDDEN), mat(HIDDEN, EXPERT_FF)) for _ in range(EXPERTS)]
        if arch in ("mixtral",):
            w[p + "block_sparse_moe.gate.weight"] = router
            for e, (g, u, d) in enumerate(experts):
                w[p + f"block_sparse_moe.experts.{e}.w1.weight"] = g
                w[p + f"block_sparse_moe.experts.{e}.w3.weight"] = u
                w[p + f"block_sparse_moe.experts.{e}.w2.weight"] = d
        elif arch == "granitemoe":  # gate and up rows fused, gate first
            w[p + "block_sparse_moe.router.layer.weight"] = router
            w[p + "block_sparse_moe.input_linear.weight"] = np.stack([np.concatenate([g, u]) for g, u, _ in experts])
            w[p + "block_sparse_moe.output_linear.weight"] = np.stack([d for _, _, d in experts])
        else:
            w[p + "mlp.gate.weight"] = router
            for e, (g, u, d) in enumerate(experts):
                w[p + f"mlp.experts.{e}.gate_proj.weight"] = g
                w[p + f"mlp.experts.{e}.up_proj.weight"] = u
                w[p + f"mlp.experts.{e}.down_proj.weight"] = d
        if arch == "qwen2moe":
            w[p + "mlp.shared_expert.gate_proj.weight"] = mat(SHARED_FF, HIDDEN)
            w[p + "mlp.shared_expert.up_proj.weight"] = mat(SHARED_FF, HIDDEN)
            w[p + "mlp.shared_expert.down_proj.weight"] = mat(HIDDEN, SHARED_FF)
            w[p + "mlp.shared_expert_gate.weight"] = mat(1, HIDDEN)
    w["model.norm.weight"] = norm(HIDDEN)
    w["lm_head.weight"] = mat(VOCAB, HIDDEN)
    return w


def gpt_oss_weights(rng, mat, norm) -> dict[str, np.ndarray]:
    """gpt-oss's weights under transformers' names: every projection biased,
    one sink logit per head, the experts as 3-D x @ W tensors with gate and
    up interleaved (gate in the even columns). Expert gate/up rows have gain
    4, so ~8% of their outputs pass the SwiGLU limit of 7."""
    q_dim, kv_dim = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM

    def bias(n, scale=0.1):
        return (scale * rng.standard_normal(n)).astype(np.float16).astype(np.float32)

    w = {"model.embed_tokens.weight": mat(VOCAB, HIDDEN, np.sqrt(HIDDEN))}
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = norm(HIDDEN)
        for x, n, gain in (("q", q_dim, 1.5), ("k", kv_dim, 1.5), ("v", kv_dim, 1.0)):
            w[p + f"self_attn.{x}_proj.weight"] = mat(n, HIDDEN, gain)
            w[p + f"self_attn.{x}_proj.bias"] = bias(n)
        w[p + "self_attn.o_proj.weight"] = mat(HIDDEN, q_dim)
        w[p + "self_attn.o_proj.bias"] = bias(HIDDEN)
        w[p + "self_attn.sinks"] = bias(HEADS, 1.0) + 1.0
        w[p + "post_attention_layernorm.weight"] = norm(HIDDEN)
        w[p + "mlp.router.weight"] = mat(EXPERTS, HIDDEN, 2.0)
        w[p + "mlp.router.bias"] = bias(EXPERTS, 0.5)
        gate = np.stack([mat(EXPERT_FF, HIDDEN, 4.0) for _ in range(EXPERTS)])
        up = np.stack([mat(EXPERT_FF, HIDDEN, 4.0) for _ in range(EXPERTS)])
        gate_up = np.empty((EXPERTS, HIDDEN, 2 * EXPERT_FF), np.float32)
        gate_up[..., ::2], gate_up[..., 1::2] = gate.transpose(0, 2, 1), up.transpose(0, 2, 1)
        w[p + "mlp.experts.gate_up_proj"] = gate_up
        w[p + "mlp.experts.gate_up_proj_bias"] = np.stack([bias(2 * EXPERT_FF) for _ in range(EXPERTS)])
        w[p + "mlp.experts.down_proj"] = np.stack([mat(HIDDEN, EXPERT_FF).T for _ in range(EXPERTS)])
        w[p + "mlp.experts.down_proj_bias"] = np.stack([bias(HIDDEN) for _ in range(EXPERTS)])
    w["model.norm.weight"] = norm(HIDDEN)
    w["lm_head.weight"] = mat(VOCAB, HIDDEN)
    return w


def gpt_oss_experts(w: dict[str, np.ndarray], layer: int) -> dict[str, np.ndarray]:
    """One layer's experts as llama.cpp's converter writes them: gate, up
    [E, F, H] and down [E, H, F] (rows of the matrices it multiplies by),
    gate and up split from the interleaved columns; their biases likewise."""
    m = f"model.layers.{layer}.mlp.experts."
    gate_up, gate_up_bias = w[m + "gate_up_proj"].transpose(0, 2, 1), w[m + "gate_up_proj_bias"]
    return {"gate": gate_up[:, ::2], "up": gate_up[:, 1::2], "down": w[m + "down_proj"].transpose(0, 2, 1),
            "gate_bias": gate_up_bias[:, ::2], "up_bias": gate_up_bias[:, 1::2], "down_bias": w[m + "down_proj_bias"]}


def mxfp4(x: np.ndarray) -> np.ndarray:
    """gguf-py's MXFP4 blocks of x's rows."""
    return gguf.quants.quantize(np.ascontiguousarray(x, dtype=np.float32), gguf.GGMLQuantizationType.MXFP4)


def gpt_oss_mxfp4_weights(w: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """w with every expert matrix replaced by what its MXFP4 blocks (as
    write_gguf(..., experts="MXFP4") stores them) dequantize to: the model
    the MXFP4 file holds, for transformers to run."""
    out = dict(w)
    for i in range(LAYERS):
        e = gpt_oss_experts(w, i)
        deq = {k: gguf.quants.dequantize(mxfp4(e[k]), gguf.GGMLQuantizationType.MXFP4) for k in ("gate", "up", "down")}
        gate_up = np.empty((EXPERTS, HIDDEN, 2 * EXPERT_FF), np.float32)
        gate_up[..., ::2], gate_up[..., 1::2] = deq["gate"].transpose(0, 2, 1), deq["up"].transpose(0, 2, 1)
        out[f"model.layers.{i}.mlp.experts.gate_up_proj"] = gate_up
        out[f"model.layers.{i}.mlp.experts.down_proj"] = deq["down"].transpose(0, 2, 1)
    return out


def write_gpt_oss_gguf(w: dict[str, np.ndarray], path: str, experts: str = "F32", merges: tuple = ()) -> None:
    """gpt-oss as llama.cpp's converter writes it: YaRN and window keys,
    biases, attn_sinks, the FFN norm as post_attention_norm, experts split
    into gate/up/down 3-D tensors, F32 or MXFP4. merges: the tokenizer's
    (llama.cpp refuses a BPE vocabulary without any)."""
    g = gguf.GGUFWriter(path, "gpt-oss")
    g.add_context_length(128)
    g.add_embedding_length(HIDDEN)
    g.add_block_count(LAYERS)
    g.add_feed_forward_length(EXPERT_FF)
    g.add_head_count(HEADS)
    g.add_head_count_kv(KV_HEADS)
    g.add_key_length(HEAD_DIM)
    g.add_value_length(HEAD_DIM)
    g.add_layer_norm_rms_eps(EPS)
    g.add_rope_freq_base(GPT_OSS_THETA)
    g.add_rope_dimension_count(HEAD_DIM)
    g.add_rope_scaling_type(gguf.RopeScalingType.YARN)
    g.add_rope_scaling_factor(GPT_OSS_YARN["factor"])
    g.add_rope_scaling_orig_ctx_len(GPT_OSS_YARN["original_max_position_embeddings"])
    g.add_rope_scaling_yarn_beta_fast(GPT_OSS_YARN["beta_fast"])
    g.add_rope_scaling_yarn_beta_slow(GPT_OSS_YARN["beta_slow"])
    g.add_expert_count(EXPERTS)
    g.add_expert_used_count(USED)
    g.add_expert_feed_forward_length(EXPERT_FF)
    g.add_sliding_window(GPT_OSS_WINDOW)
    add_tiny_vocab(g, merges)

    def put(name, value):
        g.add_tensor(name, np.ascontiguousarray(value, dtype=np.float32))

    put("token_embd.weight", w["model.embed_tokens.weight"])
    for i in range(LAYERS):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        put(b + "attn_norm.weight", w[p + "input_layernorm.weight"])
        for x, ours in (("q", "attn_q"), ("k", "attn_k"), ("v", "attn_v"), ("o", "attn_output")):
            put(b + f"{ours}.weight", w[p + f"self_attn.{x}_proj.weight"])
            put(b + f"{ours}.bias", w[p + f"self_attn.{x}_proj.bias"])
        put(b + "attn_sinks.weight", w[p + "self_attn.sinks"])
        put(b + "post_attention_norm.weight", w[p + "post_attention_layernorm.weight"])
        put(b + "ffn_gate_inp.weight", w[p + "mlp.router.weight"])
        put(b + "ffn_gate_inp.bias", w[p + "mlp.router.bias"])
        e = gpt_oss_experts(w, i)
        for ours in ("gate", "up", "down"):
            if experts == "MXFP4":
                g.add_tensor(b + f"ffn_{ours}_exps.weight", mxfp4(e[ours]), raw_dtype=gguf.GGMLQuantizationType.MXFP4)
            else:
                put(b + f"ffn_{ours}_exps.weight", e[ours])
            put(b + f"ffn_{ours}_exps.bias", e[ours + "_bias"])
    put("output_norm.weight", w["model.norm.weight"])
    put("output.weight", w["lm_head.weight"])
    g.write_header_to_file()
    g.write_kv_data_to_file()
    g.write_tensors_to_file()
    g.close()


def add_tiny_vocab(g: gguf.GGUFWriter, merges: tuple = ()) -> None:
    g.add_tokenizer_model("gpt2")
    g.add_tokenizer_pre("default")
    g.add_token_list([f"<{i}>" for i in range(VOCAB)])
    g.add_token_types([1] * VOCAB)
    g.add_token_merges(list(merges))
    g.add_bos_token_id(0)
    g.add_eos_token_id(VOCAB - 1)


def permute_for_normal_rope(w: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp's converter reorders each head's Q/K rows of a rotate-half
    (Hugging Face) llama-family model so that adjacent pairs rotate together,
    which the llama architecture's RoPE expects."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def write_gguf(arch: str, w: dict[str, np.ndarray], path: str) -> None:
    """The model as llama.cpp's converter writes it (F32): tensor names,
    3-D expert tensors, Q/K permuted for the normal-RoPE architectures."""
    if arch == "gpt-oss":
        return write_gpt_oss_gguf(w, path)
    gguf_arch = ARCHS[arch][0]
    g = gguf.GGUFWriter(path, gguf_arch)
    g.add_context_length(128)
    g.add_embedding_length(HIDDEN)
    g.add_block_count(LAYERS)
    g.add_head_count(HEADS)
    g.add_head_count_kv(KV_HEADS)
    g.add_layer_norm_rms_eps(EPS)
    g.add_rope_freq_base(THETA)
    g.add_rope_dimension_count(HEAD_DIM)
    g.add_expert_count(EXPERTS)
    g.add_expert_used_count(USED)
    if arch in ("qwen3moe", "qwen2moe"):
        g.add_feed_forward_length(4 * HIDDEN)
        g.add_expert_feed_forward_length(EXPERT_FF)
    else:
        g.add_feed_forward_length(EXPERT_FF)
    if arch == "qwen2moe":
        g.add_expert_shared_feed_forward_length(SHARED_FF)
    if HEADS * HEAD_DIM != HIDDEN:
        g.add_key_length(HEAD_DIM)
        g.add_value_length(HEAD_DIM)
    if arch == "granitemoe":
        g.add_embedding_scale(GRANITE["embedding_multiplier"])
        g.add_residual_scale(GRANITE["residual_multiplier"])
        g.add_logit_scale(GRANITE["logits_scaling"])
        g.add_attention_scale(GRANITE["attention_multiplier"])
    add_tiny_vocab(g)

    def put(name, value):
        g.add_tensor(name, np.ascontiguousarray(value, dtype=np.float32))

    normal_rope = gguf_arch in ("llama", "granitemoe")
    put("token_embd.weight", w["model.embed_tokens.weight"])
    for i in range(LAYERS):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        put(b + "attn_norm.weight", w[p + "input_layernorm.weight"])
        q, k = w[p + "self_attn.q_proj.weight"], w[p + "self_attn.k_proj.weight"]
        if normal_rope:
            q, k = permute_for_normal_rope(q, HEADS), permute_for_normal_rope(k, KV_HEADS)
        put(b + "attn_q.weight", q)
        put(b + "attn_k.weight", k)
        put(b + "attn_v.weight", w[p + "self_attn.v_proj.weight"])
        put(b + "attn_output.weight", w[p + "self_attn.o_proj.weight"])
        for x in "qkv":
            if p + f"self_attn.{x}_proj.bias" in w:
                put(b + f"attn_{x}.bias", w[p + f"self_attn.{x}_proj.bias"])
        if p + "self_attn.q_norm.weight" in w:
            put(b + "attn_q_norm.weight", w[p + "self_attn.q_norm.weight"])
            put(b + "attn_k_norm.weight", w[p + "self_attn.k_norm.weight"])
        put(b + "ffn_norm.weight", w[p + "post_attention_layernorm.weight"])
        if arch == "mixtral":
            m = p + "block_sparse_moe."
            put(b + "ffn_gate_inp.weight", w[m + "gate.weight"])
            for ours, theirs in (("gate", "w1"), ("up", "w3"), ("down", "w2")):
                put(b + f"ffn_{ours}_exps.weight",
                    np.stack([w[m + f"experts.{e}.{theirs}.weight"] for e in range(EXPERTS)]))
        elif arch == "granitemoe":
            m = p + "block_sparse_moe."
            put(b + "ffn_gate_inp.weight", w[m + "router.layer.weight"])
            gate, up = np.split(w[m + "input_linear.weight"], 2, axis=1)
            put(b + "ffn_gate_exps.weight", gate)
            put(b + "ffn_up_exps.weight", up)
            put(b + "ffn_down_exps.weight", w[m + "output_linear.weight"])
        else:
            put(b + "ffn_gate_inp.weight", w[p + "mlp.gate.weight"])
            for ours in ("gate", "up", "down"):
                put(b + f"ffn_{ours}_exps.weight",
                    np.stack([w[p + f"mlp.experts.{e}.{ours}_proj.weight"] for e in range(EXPERTS)]))
        if arch == "qwen2moe":
            put(b + "ffn_gate_inp_shexp.weight", w[p + "mlp.shared_expert_gate.weight"].reshape(-1))
            for ours in ("gate", "up", "down"):
                put(b + f"ffn_{ours}_shexp.weight", w[p + f"mlp.shared_expert.{ours}_proj.weight"])
    put("output_norm.weight", w["model.norm.weight"])
    put("output.weight", w["lm_head.weight"])
    g.write_header_to_file()
    g.write_kv_data_to_file()
    g.write_tensors_to_file()
    g.close()
