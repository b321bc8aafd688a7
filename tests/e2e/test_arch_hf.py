# olmo2, smollm3 and mistral3 against Hugging Face `transformers` itself:
# tiny models (tools/hf_arch_models.py) whose logits transformers computed
# once (tools/make_hf_arch_goldens.py, float64, stored in
# tests/golden/arch/hf_logits.npz) are rebuilt here without torch, converted
# to GGUF as llama.cpp's converter lays them out, and tessera's logits must
# equal transformers' (argmax, and max |diff| within the tolerance of the
# weight type: F32 test_arch_coverage's 2e-3 of the logit scale (measured:
# 2e-6); Q8_0 1e-1 (its goldens come from transformers on the Q8_0-rounded
# weights, so what is left is the 8-bit rounding of the matmuls' activations,
# which these 4-layer models with peaked attention amplify to up to 0.066 of
# the scale, past test_arch_coverage's 5e-2). The same file holds the
# logits with each architecture's distinctive feature switched off in the
# reference (olmo2's whole-projection QK-norm, smollm3's layers without RoPE,
# mistral3's query temperature and YaRN magnitude); they must differ from the
# real ones by far more than that tolerance, so a tessera that ignored the
# feature could not pass.
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
import hf_arch_models as ha  # noqa: E402
from test_arch_coverage import assert_logits_match, run_tessera, tolerance  # noqa: E402

GOLDEN = np.load(ROOT / "tests" / "golden" / "arch" / "hf_logits.npz")
# A feature counts as shown when switching it off moves some prompt's logits
# by this many times the F32 tolerance (they move by 60-140x on these models).
FEATURE_MARGIN = 10
TOLERANCE = {"F32": tolerance("F32"), "Q8_0": 1e-1}


@pytest.fixture(scope="module", params=[(a, w) for a in sorted(ha.ARCHS) for w in ("F32", "Q8_0")],
                ids=lambda p: "-".join(p))
def model(request, tmp_path_factory):
    arch, wtype = request.param
    path = tmp_path_factory.mktemp("hf") / f"{arch}-{wtype}.gguf"
    ha.write_gguf(arch, ha.random_weights(arch), str(path), wtype)
    return arch, wtype, str(path)


def test_tessera_matches_transformers(model, tessera_bin):
    arch, wtype, path = model
    for i, tokens in enumerate(ha.PROMPTS):
        key = f"{arch}/{i}" if wtype == "F32" else f"{arch}/{wtype}/{i}"
        assert_logits_match(run_tessera(tessera_bin, path, tokens), GOLDEN[key], TOLERANCE[wtype])


@pytest.mark.parametrize("off", sorted(ha.FEATURE_OFF))
def test_each_feature_moves_the_logits(off):
    arch = ha.FEATURE_OFF[off][0]
    moved = max(np.abs(GOLDEN[f"{off}/{i}"] - GOLDEN[f"{arch}/{i}"]).max() / np.abs(GOLDEN[f"{arch}/{i}"]).max()
                for i in range(len(ha.PROMPTS)))
    assert moved > FEATURE_MARGIN * tolerance("F32"), f"{ha.FEATURE_OFF[off][1]} moves logits by only {moved:.3g}"


def test_goldens_tell_the_architectures_apart():
    rows = [GOLDEN[f"{a}/0"] for a in sorted(ha.ARCHS)]
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            assert np.abs(rows[i] - rows[j]).max() > 0.1
