#!/usr/bin/env python3
# Runs the tiny mixture-of-experts models of tools/hf_moe_models.py through
# Hugging Face `transformers` (float64, eager attention) and stores their
# logits on its prompts in tests/golden/moe/hf_logits.npz, which
# tests/e2e/test_moe_hf.py compares tessera (and the NumPy reference) with.
# Needs torch and transformers (written with torch 2.5.1 and
# transformers 4.51.3; gpt-oss with torch 2.6 and transformers 5.25, whose
# versions it stores under versions/gpt-oss); CI does not run it, it runs the
# test on the stored file. --arch regenerates only the named architectures
# and keeps the file's other entries.
# For gpt-oss it also stores its MXFP4-experts model's logits
# (gpt-oss-mxfp4/i: the dequantized weights, with the experts' inputs rounded
# as an engine that dots MXFP4 with Q8_0 activations rounds them, as tessera
# and llama.cpp do; unrounded, the tiny model's large expert activations
# move logits by up to 0.1 of their scale) and, as proof that the test can fail, the logits with
# each of its features turned off in transformers: no sinks, no window, no
# SwiGLU clamp, and YaRN's ramp rounded to whole dimensions (llama.cpp's).
"""Usage: make_hf_moe_goldens.py [--out tests/golden/moe/hf_logits.npz] [--arch A ...]"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import torch
import transformers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_moe_models as hm  # noqa: E402

CONFIG_CLASS = {"Qwen3MoeForCausalLM": "Qwen3MoeConfig", "Qwen2MoeForCausalLM": "Qwen2MoeConfig",
                "OlmoeForCausalLM": "OlmoeConfig", "MixtralForCausalLM": "MixtralConfig",
                "GraniteMoeForCausalLM": "GraniteMoeConfig", "GptOssForCausalLM": "GptOssConfig"}


def q8_0_round(x: torch.Tensor) -> torch.Tensor:
    """x as Q8_0 blocks of 32 along its last dimension hold it: scale
    amax / 127 (stored as float16), values rounded to integers."""
    blocks = x.reshape(*x.shape[:-1], -1, 32)
    d = blocks.abs().amax(dim=-1, keepdim=True) / 127
    q = torch.round(blocks / torch.where(d > 0, d, torch.ones_like(d)))
    return (q * d.to(torch.float16).to(x.dtype)).reshape(x.shape)


def round_expert_inputs(model) -> None:
    """Rounds what each gpt-oss expert multiplies by (its input and its
    SwiGLU output) to Q8_0, keeping transformers' own expert code."""
    for layer in model.model.layers:
        m = layer.mlp.experts
        m._apply_gate = lambda gate_up, f=m._apply_gate: q8_0_round(f(gate_up))
        m.forward = lambda h, *a, f=m.forward, **k: f(q8_0_round(h), *a, **k)


def logits_of(arch: str, weights: dict | None = None, q8_0_experts: bool = False, **overrides) -> list[np.ndarray]:
    model_class = hm.ARCHS[arch][1]
    extra = {"sliding_window": None} if model_class == "MixtralForCausalLM" else {}
    config = getattr(transformers, CONFIG_CLASS[model_class])(**{**hm.hf_config(arch), **extra, **overrides})
    config._attn_implementation = "eager"
    config._experts_implementation = "eager"
    model = getattr(transformers, model_class)(config).double().eval()
    if q8_0_experts:
        round_expert_inputs(model)
    weights = hm.random_weights(arch) if weights is None else weights
    state = {k: torch.from_numpy(v.astype(np.float64)) for k, v in weights.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if "rotary_emb" not in k]
    if missing or unexpected:
        raise SystemExit(f"{arch}: weights do not fit the model: missing {missing}, unexpected {unexpected}")
    with torch.no_grad():
        return [model(torch.tensor([p])).logits[0].numpy() for p in hm.PROMPTS]


def gpt_oss_variants() -> dict[str, list[np.ndarray]]:
    """The MXFP4 model and the ablations, each under its golden name."""
    w = hm.random_weights("gpt-oss")
    no_sinks = {k: np.full_like(v, -np.inf) if k.endswith("self_attn.sinks") else v for k, v in w.items()}
    return {
        "gpt-oss-mxfp4": logits_of("gpt-oss", hm.gpt_oss_mxfp4_weights(w), q8_0_experts=True),
        "gpt-oss-no-sinks": logits_of("gpt-oss", no_sinks),
        "gpt-oss-no-window": logits_of("gpt-oss", layer_types=["full_attention"] * hm.LAYERS),
        "gpt-oss-no-clamp": logits_of("gpt-oss", swiglu_limit=1e9),
        "gpt-oss-yarn-rounded": logits_of("gpt-oss", rope_parameters={**hm.GPT_OSS_YARN, "truncate": True}),
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--out", default=os.path.join(root, "tests", "golden", "moe", "hf_logits.npz"))
    ap.add_argument("--arch", action="append", choices=sorted(hm.ARCHS), help="only these (repeatable)")
    a = ap.parse_args(argv)
    archs = a.arch or list(hm.ARCHS)
    out = dict(np.load(a.out)) if a.arch and os.path.exists(a.out) else {}
    versions = np.array([torch.__version__, transformers.__version__])
    for arch in archs:
        runs = {arch: logits_of(arch), **(gpt_oss_variants() if arch == "gpt-oss" else {})}
        for name, rows in runs.items():
            for i, logits in enumerate(rows):
                out[f"{name}/{i}"] = logits.astype(np.float32)
        out["versions/gpt-oss" if arch == "gpt-oss" else "versions"] = versions
    np.savez_compressed(a.out, **out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
