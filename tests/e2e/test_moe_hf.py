# The mixture-of-experts architectures against Hugging Face `transformers`
# itself: tiny models (tools/hf_moe_models.py) whose logits transformers
# computed once (tools/make_hf_moe_goldens.py, float64, stored in
# tests/golden/moe/hf_logits.npz) are rebuilt here without torch, converted to
# GGUF as llama.cpp's converter lays them out (3-D expert tensors; Q/K
# permuted for mixtral's and granitemoe's normal RoPE; granitemoe's fused
# gate/up split), and tessera's logits, and the NumPy reference's, must equal
# transformers'. gpt-oss (which the NumPy reference does not implement) is
# also checked with MXFP4 experts, and its golden file holds transformers'
# logits with each of its features turned off, each of which must move the
# logits beyond the tolerance (else matching would not show the feature).
# llama.cpp's logits for the same gpt-oss file (tools/llama_cpp_gpt_oss_logits.py)
# show a third implementation reads it as written.
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
import hf_moe_models as hm  # noqa: E402
import reference_forward as ref  # noqa: E402
from test_arch_coverage import assert_logits_match, run_tessera, tolerance  # noqa: E402

GOLDEN = np.load(ROOT / "tests" / "golden" / "moe" / "hf_logits.npz")
LLAMA_CPP = np.load(ROOT / "tests" / "golden" / "moe" / "llama_cpp_gpt_oss.npz")


@pytest.fixture(scope="module", params=sorted(hm.ARCHS))
def model(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("hf") / f"{request.param}.gguf"
    hm.write_gguf(request.param, hm.random_weights(request.param), str(path))
    return request.param, str(path)


def test_tessera_matches_transformers(model, tessera_bin):
    arch, path = model
    for i, tokens in enumerate(hm.PROMPTS):
        assert_logits_match(run_tessera(tessera_bin, path, tokens), GOLDEN[f"{arch}/{i}"], tolerance("F32"))


def test_reference_matches_transformers(model):
    arch, path = model
    if arch == "gpt-oss":
        pytest.skip("the NumPy reference does not implement gpt-oss")
    m = ref.Model(path)
    for i, tokens in enumerate(hm.PROMPTS):
        np.testing.assert_allclose(ref.forward(m, tokens), GOLDEN[f"{arch}/{i}"], rtol=0, atol=1e-4)


def test_goldens_tell_the_architectures_apart():
    # Each model's logits are its own: a mix-up of files or prompts shows.
    rows = [GOLDEN[f"{a}/0"] for a in sorted(hm.ARCHS)]
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            assert np.abs(rows[i] - rows[j]).max() > 0.1


def test_gpt_oss_mxfp4_experts_match_transformers(tessera_bin, tmp_path):
    # Experts quantized by gguf-py; transformers ran the weights those blocks
    # dequantize to, with the experts' inputs rounded to Q8_0 as tessera
    # rounds the activations it dots MXFP4 rows with (so F32's tolerance:
    # without that rounding the reference moves by up to 0.1 of the scale).
    path = str(tmp_path / "gpt-oss-mxfp4.gguf")
    hm.write_gpt_oss_gguf(hm.random_weights("gpt-oss"), path, experts="MXFP4")
    for i, tokens in enumerate(hm.PROMPTS):
        assert_logits_match(run_tessera(tessera_bin, path, tokens), GOLDEN[f"gpt-oss-mxfp4/{i}"], tolerance("F32"))


@pytest.mark.parametrize("variant", ["no-sinks", "no-window", "no-clamp", "yarn-rounded", "mxfp4"])
def test_gpt_oss_goldens_need_each_feature(variant):
    # Sinks, the window (4, shorter than every prompt), the SwiGLU clamp,
    # YaRN's unrounded ramp and the MXFP4 rounding each move transformers'
    # logits by more than the F32 tolerance on some prompt.
    moved = max(np.abs(GOLDEN[f"gpt-oss-{variant}/{i}"] - GOLDEN[f"gpt-oss/{i}"]).max() /
                np.abs(GOLDEN[f"gpt-oss/{i}"]).max() for i in range(len(hm.PROMPTS)))
    assert moved > tolerance("F32"), f"{variant}: logits moved only {moved:.3g} of their scale"
    assert min(len(p) for p in hm.PROMPTS) > hm.GPT_OSS_WINDOW


def test_llama_cpp_reads_the_gpt_oss_file_as_transformers_runs_it():
    # The file's conventions (split gate/up, bias shapes, sinks, norm names,
    # window keys) as llama.cpp reads them: its logits equal transformers'
    # once YaRN's ramp is rounded as llama.cpp always rounds it (tessera
    # follows the model's unrounded ramp: gpt-oss-yarn-rounded differs).
    for i in range(len(hm.PROMPTS)):
        assert_logits_match(LLAMA_CPP[f"gpt-oss/{i}"], GOLDEN[f"gpt-oss-yarn-rounded/{i}"], tolerance("F32"))
