# tessera against llama.cpp on the tiny qwen3/gemma2/gemma3 models: llama.cpp's
# logits, stored in golden/llama_cpp_tiny_logits.npz by
# tools/llama_cpp_logits.py, agree with tessera's and with the NumPy reference
# within llama.cpp's own rounding (F16 K/V), so all three read the GGUF
# conventions the same way. With llama-cpp-python installed, the golden
# file is also checked against a live llama.cpp run.
import importlib.util
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import llama_cpp_logits as lcpp  # noqa: E402
import reference_forward as ref  # noqa: E402
from test_arch_coverage import assert_logits_match, run_tessera  # noqa: E402

GOLDEN = ROOT / "tests" / "e2e" / "golden" / "llama_cpp_tiny_logits.npz"
# llama.cpp stores K/V as F16: ~1e-3 of the logit scale on these models.
TOLERANCE = 5e-3


@pytest.fixture(scope="module")
def golden():
    return np.load(GOLDEN)


@pytest.mark.parametrize("name", sorted(lcpp.CASES))
def test_tessera_and_reference_match_llama_cpp(tmp_path, tessera_bin, golden, name):
    assert golden["tokens"].tolist() == lcpp.TOKENS
    path = lcpp.write_case(str(tmp_path), name)
    llama_cpp = golden[name].astype(np.float64)
    # Fails also when make_tiny_model changed: regenerate the golden file then.
    assert_logits_match(ref.reference_logits(path, lcpp.TOKENS), llama_cpp, TOLERANCE)
    assert_logits_match(run_tessera(tessera_bin, path, lcpp.TOKENS), llama_cpp, TOLERANCE)


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed")
@pytest.mark.parametrize("name", sorted(lcpp.CASES))
def test_golden_file_is_what_llama_cpp_computes(tmp_path, golden, name):
    live = lcpp.llama_cpp_logits(lcpp.write_case(str(tmp_path), name))
    np.testing.assert_allclose(live, golden[name], rtol=0, atol=1e-4)
