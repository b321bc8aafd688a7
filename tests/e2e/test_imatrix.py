# `tessera imatrix` and `tessera quantize --imatrix`: the importance matrix
# is written in llama.cpp's GGUF layout with one entry per layer weight, its
# per-column statistics agree with llama-imatrix's on the same model and text
# (tests/golden/imatrix/, tools/gen_imatrix_golden.py), quantizing with it
# lowers the KL divergence to the unquantized model on a held-out text (more
# than the weighted search alone does), and hostile or mismatched files are
# refused with a message.
import json
import pathlib
import re
import subprocess
import sys

import gguf
import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "imatrix" / "smollm2_gpl2_c128x8.json"
LICENSES = pathlib.Path("/usr/share/common-licenses")
CALIBRATION, HELD_OUT = LICENSES / "GPL-2", LICENSES / "GPL-3"  # Debian's base-files
CTX, CHUNKS = 128, 8
LAYER_WEIGHTS = {"attn_q": 576, "attn_k": 576, "attn_v": 576, "attn_output": 576, "ffn_gate": 576,
                 "ffn_up": 576, "ffn_down": 1536}  # SmolLM2-135M's input columns

pytestmark = pytest.mark.skipif(not HELD_OUT.exists(), reason="Debian's license texts are missing")


def tessera(tessera_bin, *args, timeout=600):
    return subprocess.run([tessera_bin, *map(str, args)], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("imatrix")


@pytest.fixture(scope="module")
def imatrix(tessera_bin, model_path, work):
    out = work / "smollm2.imatrix.gguf"
    r = tessera(tessera_bin, "imatrix", "-m", model_path, "-f", CALIBRATION, "-c", CTX, "--chunks", CHUNKS,
                "-t", 2, "-o", out)
    assert r.returncode == 0, r.stderr
    assert f"{CHUNKS} chunks of {CTX} tokens" in r.stdout
    return out


def entries(path):
    reader = gguf.GGUFReader(str(path))
    tensors = {t.name: np.asarray(t.data, dtype=np.float64) for t in reader.tensors}
    fields = {f.name: f.contents() for f in reader.fields.values() if not f.name.startswith("GGUF.")}
    out = {}
    for name in tensors:
        if name.endswith(".in_sum2"):
            weight = name[: -len(".in_sum2")]
            out[weight] = (tensors[name], tensors[weight + ".counts"].reshape(-1))
    return fields, out


def test_file_has_llama_cpp_layout_and_every_layer_weight(imatrix):
    fields, got = entries(imatrix)
    assert fields["general.type"] == "imatrix"
    assert fields["imatrix.datasets"] == [str(CALIBRATION)]
    assert fields["imatrix.chunk_count"] == CHUNKS and fields["imatrix.chunk_size"] == CTX
    want = {f"blk.{l}.{w}.weight" for l in range(30) for w in LAYER_WEIGHTS}
    assert set(got) == want, "token_embd and output are not matmul inputs of a layer"
    for name, (sum2, counts) in got.items():
        cols = LAYER_WEIGHTS[name.split(".")[2]]
        assert sum2.shape == (1, cols) and counts.tolist() == [CTX * CHUNKS], name
        assert np.all(sum2 >= 0) and np.all(np.isfinite(sum2)) and sum2.sum() > 0, name
    for l in range(30):
        q = got[f"blk.{l}.attn_q.weight"][0]
        assert np.array_equal(q, got[f"blk.{l}.attn_k.weight"][0]), "Q, K and V share their input"
        assert np.array_equal(got[f"blk.{l}.ffn_gate.weight"][0], got[f"blk.{l}.ffn_up.weight"][0])


def test_statistics_agree_with_llama_imatrix(imatrix):
    # llama-imatrix on the same model, text and chunks: each tensor's mean
    # squared input and its 8 largest columns. Measured: means within 0.42%,
    # the largest columns within 1.5%, except ffn_down's (the SwiGLU output,
    # where int8 activation rounding differs most): 5.7%.
    golden = json.loads(GOLDEN.read_text())
    _, got = entries(imatrix)
    assert set(golden["tensors"]) == set(got)
    for name, want in golden["tensors"].items():
        sum2, counts = got[name]
        means = sum2.reshape(-1) / counts[0]
        assert counts[0] == want["count"], name
        assert means.mean() == pytest.approx(want["mean"], rel=0.01), name
        top = np.array(want["top_columns"])
        rel = 0.1 if ".ffn_down." in name else 0.025
        assert means[top] == pytest.approx(np.array(want["top_values"]), rel=rel), name


def kl(tessera_bin, model, reference):
    r = tessera(tessera_bin, "perplexity", "-m", model, "-f", HELD_OUT, "-c", 256, "--chunks", 4, "-t", 2,
                "--kl-divergence", reference)
    assert r.returncode == 0, r.stderr
    return float(re.search(r"KL divergence: mean ([\d.e+-]+)", r.stdout).group(1))


def uniform_imatrix(src, dst):
    """The same file with every column equally important: the weighted search without the statistics."""
    reader = gguf.GGUFReader(str(src))
    w = gguf.GGUFWriter(str(dst), "llama")
    w.add_string("general.type", "imatrix")
    for t in reader.tensors:
        a = np.asarray(t.data, dtype=np.float32).reshape([int(d) for d in reversed(t.shape)])
        w.add_tensor(t.name, np.ones_like(a) if t.name.endswith(".in_sum2") else a)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def test_importance_lowers_the_kl_divergence(tessera_bin, model_path, imatrix, work):
    # The default model's weights as F16 stand in for an unquantized model.
    f16 = work / "f16.gguf"
    r = tessera(tessera_bin, "quantize", "--allow-requantize", model_path, f16, "F16")
    assert r.returncode == 0, r.stderr
    reference = work / "f16.logits"
    r = tessera(tessera_bin, "perplexity", "-m", f16, "-f", HELD_OUT, "-c", 256, "--chunks", 4, "-t", 2,
                "--save-logits", reference)
    assert r.returncode == 0, r.stderr
    uniform_imatrix(imatrix, work / "uniform.gguf")
    got = {}
    for mix, variants in (("Q4_0", ("none", "uniform", "imatrix")), ("Q4_K_S", ("none", "imatrix"))):
        for v in variants:
            out = work / f"{mix}-{v}.gguf"
            extra = {"none": [], "uniform": ["--imatrix", work / "uniform.gguf"], "imatrix": ["--imatrix", imatrix]}[v]
            r = tessera(tessera_bin, "quantize", f16, out, mix, *extra)
            assert r.returncode == 0, r.stderr
            if v != "none":
                assert "210 of the converted tensors weighted" in r.stderr
            got[mix, v] = kl(tessera_bin, out, reference)
    # Measured: Q4_0 0.226 plain, 0.198 searched with uniform weights, 0.127
    # with the importance matrix; Q4_K_S 0.054 and 0.041.
    assert got["Q4_0", "imatrix"] < 0.75 * got["Q4_0", "none"], got
    assert got["Q4_0", "imatrix"] < 0.8 * got["Q4_0", "uniform"], got
    assert got["Q4_K_S", "imatrix"] < 0.9 * got["Q4_K_S", "none"], got
    fields = {f.name: f.contents() for f in gguf.GGUFReader(str(work / "Q4_0-imatrix.gguf")).fields.values()}
    assert fields["quantize.imatrix.file"] == str(imatrix)
    assert fields["quantize.imatrix.entries_count"] == 210
    assert fields["quantize.imatrix.chunks_count"] == CHUNKS


def test_mismatched_and_hostile_files_are_refused(tessera_bin, model_path, imatrix, work, tmp_path):
    tiny = tmp_path / "tiny.gguf"
    subprocess.run([sys.executable, str(ROOT / "tools" / "make_tiny_model.py"), "--out", str(tiny),
                    "--variant", "gqa", "--wtype", "F32", "--seed", "4"], check=True)
    legacy = tmp_path / "legacy.dat"
    legacy.write_bytes(b"\x00\x00\x00\x00")
    cases = [(imatrix, "was it made for another model?"),  # SmolLM2's matrix for the tiny model
             (legacy, "legacy .dat"),
             (model_path, "not an importance matrix"),
             (tmp_path / "missing.gguf", "cannot read")]
    for path, message in cases:
        out = tmp_path / "out.gguf"
        r = tessera(tessera_bin, "quantize", tiny, out, "Q4_0", "--imatrix", path)
        assert r.returncode == 1 and message in r.stderr, (path, r.stderr)
        assert not out.exists(), "no partial model is left behind"
