#!/usr/bin/env python3
# Tiny dense models of the architectures olmo2, smollm3 and mistral3
# (Ministral 3) in Hugging Face form and their GGUF conversion, shared by
# tools/make_hf_arch_goldens.py (which runs them through `transformers` and
# stores the logits in tests/golden/arch/hf_logits.npz) and
# tests/e2e/test_arch_hf.py (which rebuilds the same weights without torch,
# converts them as llama.cpp's convert_hf_to_gguf.py lays them out, and checks
# tessera's logits against the stored ones). Needs numpy and gguf.
#
# Each architecture also has "feature off" variants (FEATURE_OFF): the same
# weights with its distinctive feature switched off in the reference, whose
# logits must differ from the real ones by more than the test's tolerance, so
# the comparison cannot pass with the feature missing.
from __future__ import annotations

import numpy as np
import gguf

VOCAB, HIDDEN, LAYERS, HEADS, KV_HEADS, HEAD_DIM, FF = 64, 64, 4, 4, 2, 16, 96
EPS, THETA = 1e-6, 10000.0
PROMPTS = [[1, 5, 9, 23, 42, 7, 3, 60, 25, 17, 33], [63, 0, 12, 12, 12, 8, 42], [7, 50, 2, 31, 44, 9, 18, 27, 5]]
# mistral3's YaRN and query temperature. The original context is short so
# that the prompts cross three temperature windows (positions 0-3, 4-7,
# 8-10) and the betas give YaRN's ramp several dimensions (0 to 3 of 8).
YARN = dict(factor=8.0, original_max_position_embeddings=4, beta_fast=0.5, beta_slow=0.05, mscale=1.0,
            mscale_all_dim=0.5, llama_4_scaling_beta=0.4)
QUANTIZED = ("Q8_0",)  # weight types of the quantized goldens (gguf-py quantizes them)
NOPE_INTERVAL = 4  # smollm3: layer 3 of 4 has no RoPE (llama.cpp fixes the interval at 4)

# GGUF architecture of each model, and the transformers class that defines it.
ARCHS = {
    "olmo2": ("olmo2", "Olmo2ForCausalLM"),
    "smollm3": ("smollm3", "SmolLM3ForCausalLM"),
    "mistral3": ("mistral3", "Ministral3ForCausalLM"),
}
# Variants of the reference with one feature off: name -> (arch, what is off).
FEATURE_OFF = {
    "olmo2/qk_norm_per_head": ("olmo2", "QK-norm per head instead of over the whole Q/K projections"),
    "smollm3/rope_everywhere": ("smollm3", "RoPE on every layer (no NoPE layers)"),
    "mistral3/no_temperature": ("mistral3", "no query temperature (llama_4_scaling_beta = 0)"),
    "mistral3/no_yarn_mscale": ("mistral3", "YaRN magnitude without mscale_all_dim (attention_factor 1)"),
}


def hf_config(arch: str, off: str | None = None) -> dict:
    """The transformers config of the tiny model (an XConfig(**this)), with
    the feature `off` (a FEATURE_OFF key) switched off."""
    c = dict(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
             num_key_value_heads=KV_HEADS, intermediate_size=FF, rms_norm_eps=EPS, max_position_embeddings=32,
             tie_word_embeddings=False, pad_token_id=None, bos_token_id=None, eos_token_id=None)
    if arch == "olmo2":
        c.update(rope_parameters=dict(rope_type="default", rope_theta=THETA))
    elif arch == "smollm3":
        c.update(rope_parameters=dict(rope_type="default", rope_theta=THETA), no_rope_layer_interval=NOPE_INTERVAL,
                 no_rope_layers=[int((i + 1) % NOPE_INTERVAL != 0 or off == "smollm3/rope_everywhere")
                                 for i in range(LAYERS)])
    elif arch == "mistral3":
        y = dict(YARN)
        if off == "mistral3/no_temperature":
            y["llama_4_scaling_beta"] = 0.0
        if off == "mistral3/no_yarn_mscale":
            y["attention_factor"] = 1.0
        c.update(head_dim=HEAD_DIM, sliding_window=None, max_position_embeddings=int(
            YARN["factor"] * YARN["original_max_position_embeddings"]),
            rope_parameters=dict(rope_type="yarn", rope_theta=THETA, **y))
    return c


def random_weights(arch: str, seed: int = 0) -> dict[str, np.ndarray]:
    """Weights under the transformers names, float32 values that float16
    holds exactly. Matrices ~ N(0, 1/fan_in), Q/K a little larger (peaked
    attention, so RoPE and the query temperature matter), norms near 1."""
    rng = np.random.default_rng(seed)

    def mat(n_out, n_in, gain=1.0):
        return (gain * rng.standard_normal((n_out, n_in)) / np.sqrt(n_in)).astype(np.float16).astype(np.float32)

    def norm(n):
        return (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float16).astype(np.float32)

    q_dim, kv_dim = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    w = {"model.embed_tokens.weight": mat(VOCAB, HIDDEN, np.sqrt(HIDDEN))}
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        if arch != "olmo2":
            w[p + "input_layernorm.weight"] = norm(HIDDEN)
        w[p + "self_attn.q_proj.weight"] = mat(q_dim, HIDDEN, 2.0)
        w[p + "self_attn.k_proj.weight"] = mat(kv_dim, HIDDEN, 2.0)
        w[p + "self_attn.v_proj.weight"] = mat(kv_dim, HIDDEN)
        w[p + "self_attn.o_proj.weight"] = mat(HIDDEN, q_dim)
        if arch == "olmo2":  # over the whole projections; norms after attention and FFN
            w[p + "self_attn.q_norm.weight"] = norm(q_dim)
            w[p + "self_attn.k_norm.weight"] = norm(kv_dim)
            w[p + "post_feedforward_layernorm.weight"] = norm(HIDDEN)
        w[p + "post_attention_layernorm.weight"] = norm(HIDDEN)
        w[p + "mlp.gate_proj.weight"] = mat(FF, HIDDEN)
        w[p + "mlp.up_proj.weight"] = mat(FF, HIDDEN)
        w[p + "mlp.down_proj.weight"] = mat(HIDDEN, FF)
    w["model.norm.weight"] = norm(HIDDEN)
    w["lm_head.weight"] = mat(VOCAB, HIDDEN)
    return w


def rounded_weights(w: dict[str, np.ndarray], wtype: str) -> dict[str, np.ndarray]:
    """The weights as a wtype GGUF of write_gguf holds them: every matrix
    quantized and dequantized again (row by row, so the Q/K permutation does
    not change the rounding). Transformers runs on these for the quantized
    goldens, so the test's difference is tessera's arithmetic, not the
    weights' rounding."""
    qtype = gguf.GGMLQuantizationType[wtype]
    return {k: gguf.quants.dequantize(gguf.quants.quantize(v, qtype), qtype).reshape(v.shape) if v.ndim == 2 else v
            for k, v in w.items()}


def permute_for_normal_rope(w: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp's converter reorders each head's Q/K rows of a rotate-half
    (Hugging Face) llama-family model so that adjacent pairs rotate together,
    which smollm3's and mistral3's RoPE (llama.cpp's "normal" type) expects."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def write_gguf(arch: str, w: dict[str, np.ndarray], path: str, wtype: str = "F32") -> None:
    """The model as llama.cpp's converter writes it (F32, or with its
    matrices in wtype, a type gguf-py quantizes: Q8_0): tensor names
    (olmo2: post_attention_norm / post_ffw_norm and no pre-norms), Q/K
    permuted for smollm3 and mistral3, mistral3's YaRN and temperature keys.
    smollm3's NoPE interval is not written: no GGUF key carries it."""
    g = gguf.GGUFWriter(path, ARCHS[arch][0])
    c = hf_config(arch)
    g.add_context_length(c["max_position_embeddings"])
    g.add_embedding_length(HIDDEN)
    g.add_block_count(LAYERS)
    g.add_feed_forward_length(FF)
    g.add_head_count(HEADS)
    g.add_head_count_kv(KV_HEADS)
    g.add_layer_norm_rms_eps(EPS)
    g.add_rope_freq_base(THETA)
    g.add_rope_dimension_count(HEAD_DIM)
    if arch == "mistral3":
        g.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        g.add_rope_scaling_factor(YARN["factor"])
        g.add_rope_scaling_orig_ctx_len(YARN["original_max_position_embeddings"])
        g.add_rope_scaling_yarn_beta_fast(YARN["beta_fast"])
        g.add_rope_scaling_yarn_beta_slow(YARN["beta_slow"])
        g.add_rope_scaling_yarn_log_mul(YARN["mscale_all_dim"])
        g.add_attn_temperature_scale(YARN["llama_4_scaling_beta"])
    g.add_tokenizer_model("gpt2")
    g.add_tokenizer_pre("default")
    g.add_token_list([f"<{i}>" for i in range(VOCAB)])
    g.add_token_types([1] * VOCAB)
    g.add_token_merges([])
    g.add_bos_token_id(0)
    g.add_eos_token_id(VOCAB - 1)

    qtype = gguf.GGMLQuantizationType[wtype]

    def put(name, value):
        value = np.ascontiguousarray(value, dtype=np.float32)
        if value.ndim == 2 and qtype != gguf.GGMLQuantizationType.F32:
            g.add_tensor(name, gguf.quants.quantize(value, qtype), raw_dtype=qtype)
        else:
            g.add_tensor(name, value)

    put("token_embd.weight", w["model.embed_tokens.weight"])
    for i in range(LAYERS):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        q, k = w[p + "self_attn.q_proj.weight"], w[p + "self_attn.k_proj.weight"]
        if arch in ("smollm3", "mistral3"):
            q, k = permute_for_normal_rope(q, HEADS), permute_for_normal_rope(k, KV_HEADS)
        put(b + "attn_q.weight", q)
        put(b + "attn_k.weight", k)
        put(b + "attn_v.weight", w[p + "self_attn.v_proj.weight"])
        put(b + "attn_output.weight", w[p + "self_attn.o_proj.weight"])
        if arch == "olmo2":
            put(b + "attn_q_norm.weight", w[p + "self_attn.q_norm.weight"])
            put(b + "attn_k_norm.weight", w[p + "self_attn.k_norm.weight"])
            put(b + "post_attention_norm.weight", w[p + "post_attention_layernorm.weight"])
            put(b + "post_ffw_norm.weight", w[p + "post_feedforward_layernorm.weight"])
        else:
            put(b + "attn_norm.weight", w[p + "input_layernorm.weight"])
            put(b + "ffn_norm.weight", w[p + "post_attention_layernorm.weight"])
        for ours in ("gate", "up", "down"):
            put(b + f"ffn_{ours}.weight", w[p + f"mlp.{ours}_proj.weight"])
    put("output_norm.weight", w["model.norm.weight"])
    put("output.weight", w["lm_head.weight"])
    g.write_header_to_file()
    g.write_kv_data_to_file()
    g.write_tensors_to_file()
    g.close()
