#!/usr/bin/env python3
# Runs the tiny models of tools/hf_arch_models.py (olmo2, smollm3, mistral3)
# through Hugging Face `transformers` (float64, eager attention) and stores
# their logits on its prompts in tests/golden/arch/hf_logits.npz (also on
# the weights rounded to each QUANTIZED type), together
# with the logits of each FEATURE_OFF variant (the same weights with one
# distinctive feature switched off), which tests/e2e/test_arch_hf.py uses to
# show the comparison is not vacuous. Needs torch and transformers (written
# with torch 2.6.0 and transformers 5.25.0: Ministral3 is transformers 5
# only); CI does not run it, it runs the test on the stored file.
"""Usage: make_hf_arch_goldens.py [--out tests/golden/arch/hf_logits.npz]"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import torch
import transformers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_arch_models as ha  # noqa: E402


class PerHeadRMSNorm(torch.nn.Module):
    """olmo2's Q/K norm applied head by head (the weight's slice for each
    head), the mistake the olmo2/qk_norm_per_head variant stands for."""

    def __init__(self, norm: torch.nn.Module, head_dim: int):
        super().__init__()
        self.weight, self.eps, self.head_dim = norm.weight, norm.variance_epsilon, head_dim

    def forward(self, x):
        shape = x.shape
        h = x.reshape(*shape[:-1], -1, self.head_dim)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return h.reshape(shape) * self.weight


def build(arch: str, off: str | None, wtype: str = "F32"):
    model_class = ha.ARCHS[arch][1]
    config_class = getattr(transformers, model_class.replace("ForCausalLM", "Config"))
    config = config_class(**ha.hf_config(arch, off))
    config._attn_implementation = "eager"
    model = getattr(transformers, model_class)(config).double().eval()
    weights = ha.random_weights(arch)
    if wtype != "F32":
        weights = ha.rounded_weights(weights, wtype)
    state = {k: torch.from_numpy(v.astype(np.float64)) for k, v in weights.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if "rotary_emb" not in k]
    if missing or unexpected:
        raise SystemExit(f"{arch}: weights do not fit the model: missing {missing}, unexpected {unexpected}")
    if off == "olmo2/qk_norm_per_head":
        for layer in model.model.layers:
            layer.self_attn.q_norm = PerHeadRMSNorm(layer.self_attn.q_norm, ha.HEAD_DIM)
            layer.self_attn.k_norm = PerHeadRMSNorm(layer.self_attn.k_norm, ha.HEAD_DIM)
    return model


def logits_of(arch: str, off: str | None = None, wtype: str = "F32") -> list[np.ndarray]:
    model = build(arch, off, wtype)
    with torch.no_grad():
        return [model(torch.tensor([p])).logits[0].numpy() for p in ha.PROMPTS]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--out", default=os.path.join(root, "tests", "golden", "arch", "hf_logits.npz"))
    a = ap.parse_args(argv)
    out = {}
    for arch in ha.ARCHS:
        for i, logits in enumerate(logits_of(arch)):
            out[f"{arch}/{i}"] = logits.astype(np.float32)
        for wtype in ha.QUANTIZED:
            for i, logits in enumerate(logits_of(arch, wtype=wtype)):
                out[f"{arch}/{wtype}/{i}"] = logits.astype(np.float32)
    for off, (arch, _) in ha.FEATURE_OFF.items():
        for i, logits in enumerate(logits_of(arch, off)):
            out[f"{off}/{i}"] = logits.astype(np.float32)
    out["versions"] = np.array([torch.__version__, transformers.__version__])
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    np.savez_compressed(a.out, **out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
