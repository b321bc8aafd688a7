#!/usr/bin/env python3
# Runs the tiny mixture-of-experts models of tools/hf_moe_models.py through
# Hugging Face `transformers` (float64, eager attention) and stores their
# logits on its prompts in tests/golden/moe/hf_logits.npz, which
# tests/e2e/test_moe_hf.py compares tessera (and the NumPy reference) with.
# Needs torch and transformers (written with torch 2.5.1 and
# transformers 4.51.3); CI does not run it, it runs the test on the stored file.
"""Usage: make_hf_moe_goldens.py [--out tests/golden/moe/hf_logits.npz]"""
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
                "GraniteMoeForCausalLM": "GraniteMoeConfig"}


def logits_of(arch: str) -> list[np.ndarray]:
    model_class = hm.ARCHS[arch][1]
    extra = {"sliding_window": None} if model_class == "MixtralForCausalLM" else {}
    config = getattr(transformers, CONFIG_CLASS[model_class])(**hm.hf_config(arch), **extra)
    config._attn_implementation = "eager"
    model = getattr(transformers, model_class)(config).double().eval()
    state = {k: torch.from_numpy(v.astype(np.float64)) for k, v in hm.random_weights(arch).items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if "rotary_emb" not in k]
    if missing or unexpected:
        raise SystemExit(f"{arch}: weights do not fit the model: missing {missing}, unexpected {unexpected}")
    with torch.no_grad():
        return [model(torch.tensor([p])).logits[0].numpy() for p in hm.PROMPTS]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--out", default=os.path.join(root, "tests", "golden", "moe", "hf_logits.npz"))
    a = ap.parse_args(argv)
    out = {}
    for arch in hm.ARCHS:
        for i, logits in enumerate(logits_of(arch)):
            out[f"{arch}/{i}"] = logits.astype(np.float32)
    out["versions"] = np.array([torch.__version__, transformers.__version__])
    np.savez_compressed(a.out, **out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
