# `tessera quantize`: the legacy formats come out byte-identical to gguf-py's
# reference quantizers, K-quants decode (with gguf-py's independent
# dequantizers) closer to the weights than plain rounding does, metadata
# survives, and the written models run and match the NumPy reference forward
# on their own (dequantized) weights, at every kernel level for the low-bit
# and codebook types. Types and errors are compared with
# llama.cpp's own quantizer (a stored golden), and where llama-cpp-python is
# installed, llama.cpp loads and runs tessera's output.
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import gguf
from gguf import GGMLQuantizationType as QT

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
import make_tiny_model as tiny  # noqa: E402
import reference_forward as ref  # noqa: E402
from test_arch_coverage import QUANT_TOLERANCE, TOKENS, assert_logits_match, run_tessera  # noqa: E402

# llama.cpp's general.file_type numbers for the mixes tested here.
FILE_TYPE = {"F16": 1, "BF16": 32, "Q4_0": 2, "Q4_1": 3, "Q5_0": 8, "Q5_1": 9, "Q8_0": 7,
             "Q4_K_S": 14, "Q4_K_M": 15, "Q5_K_S": 16, "Q5_K_M": 17, "Q6_K": 18,
             "Q2_K": 10, "Q3_K_S": 11, "Q3_K_M": 12, "Q3_K_L": 13, "IQ4_NL": 25, "IQ4_XS": 30}


@pytest.fixture(scope="module")
def f32_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("quant") / "tiny-f32.gguf"
    subprocess.run([sys.executable, str(ROOT / "tools" / "make_tiny_model.py"), "--out", str(path),
                    "--variant", "gqa", "--wtype", "F32", "--seed", "4"], check=True)
    return path


def quantize(tessera_bin, src, dst, mix, *extra):
    return subprocess.run([tessera_bin, "quantize", str(src), str(dst), mix, *extra],
                          capture_output=True, text=True, timeout=300)


def tensors(path):
    return {t.name: t for t in gguf.GGUFReader(str(path)).tensors}


def decoded(t):
    return gguf.quants.dequantize(np.asarray(t.data), t.tensor_type).reshape(-1)


def rel_rms(got, want):
    return float(np.sqrt(np.mean((got - want) ** 2) / np.mean(want ** 2)))


@pytest.mark.parametrize("mix", ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "F16", "BF16"])
def test_round_to_nearest_types_match_gguf_py_bytes(tmp_path, tessera_bin, f32_model, mix):
    out = tmp_path / f"{mix}.gguf"
    r = quantize(tessera_bin, f32_model, out, mix)
    assert r.returncode == 0, r.stderr
    src, dst = tensors(f32_model), tensors(out)
    assert list(src) == list(dst), "tensor order is kept"
    low_bits = mix not in ("Q8_0", "F16", "BF16")
    for name, t in dst.items():
        weights = np.asarray(src[name].data, dtype=np.float32)
        if len(t.shape) < 2:
            assert t.tensor_type == QT.F32 and np.array_equal(np.asarray(t.data), weights), name
        elif name == "output.weight" and low_bits:
            assert t.tensor_type == QT.Q6_K, name
            assert rel_rms(decoded(t), weights.reshape(-1)) < 0.03, name
        else:
            assert t.tensor_type == QT[mix], name
            want = gguf.quants.quantize(weights, QT[mix])
            assert np.asarray(t.data).tobytes() == want.tobytes(), f"{name}: bytes differ from gguf-py"


def test_metadata_is_kept(tmp_path, tessera_bin, f32_model):
    out = tmp_path / "q8.gguf"
    assert quantize(tessera_bin, f32_model, out, "Q8_0").returncode == 0
    before = gguf.GGUFReader(str(f32_model)).fields
    after = gguf.GGUFReader(str(out)).fields
    skip = {"general.file_type", "general.quantization_version", "GGUF.version", "GGUF.tensor_count",
            "GGUF.kv_count"}
    for key, field in before.items():
        if key in skip:
            continue
        assert key in after, key
        assert field.types == after[key].types, key
        assert [bytes(field.parts[i]) for i in field.data] == [bytes(after[key].parts[i]) for i in after[key].data], key
    assert int(after["general.file_type"].parts[-1][0]) == FILE_TYPE["Q8_0"]


@pytest.mark.parametrize("mix,base,bound", [("Q4_K_M", "Q4_K", 0.11), ("Q5_K_S", "Q5_K", 0.055),
                                            ("Q6_K", "Q6_K", 0.028)])
def test_k_quants_beat_round_to_nearest(tmp_path, tessera_bin, f32_model, mix, base, bound):
    out = tmp_path / f"{mix}.gguf"
    r = quantize(tessera_bin, f32_model, out, mix)
    assert r.returncode == 0, r.stderr
    src, dst = tensors(f32_model), tensors(out)
    ours = rtn = 0.0
    for name, t in dst.items():
        if len(t.shape) < 2 or name == "output.weight":
            continue
        if t.tensor_type != QT[base]:  # _M: the last layer's attn_v and ffn_down get more bits
            assert mix.endswith("_M") and t.tensor_type == QT.Q6_K and name.startswith("blk.1."), name
            assert name.endswith(("attn_v.weight", "ffn_down.weight")), name
            continue
        w = np.asarray(src[name].data, dtype=np.float32).reshape(-1, t.shape[0])
        err = rel_rms(decoded(t), w.reshape(-1))
        assert err < bound, f"{name}: relative RMS error {err:.4f}"
        # make_tiny_model's encoders: plain min/max rounding in the same format.
        plain = gguf.quants.dequantize(tiny.encode(w.astype(np.float64), QT[base]), QT[base]).reshape(-1)
        ours += err
        rtn += rel_rms(plain, w.reshape(-1))
    assert ours < 0.97 * rtn, f"scale search {ours:.4f} vs round-to-nearest {rtn:.4f}"
    assert int(gguf.GGUFReader(str(out)).fields["general.file_type"].parts[-1][0]) == FILE_TYPE[mix]


@pytest.mark.parametrize("mix", ["Q4_K_M", "Q8_0", "Q5_1"])
def test_quantized_model_runs(tmp_path, tessera_bin, f32_model, mix):
    # The written file loads and runs; its logits match the reference forward
    # pass on the file's own weights (which gguf-py dequantizes).
    out = tmp_path / f"{mix}.gguf"
    assert quantize(tessera_bin, f32_model, out, mix).returncode == 0
    got = run_tessera(tessera_bin, str(out))
    assert_logits_match(got, ref.reference_logits(str(out), TOKENS), QUANT_TOLERANCE)


def logits_at_level(tessera_bin, model, level):
    env = dict(os.environ, TESSERA_KERNELS=level)
    r = subprocess.run([tessera_bin, "logits", "-m", str(model), "--tokens", " ".join(map(str, TOKENS))],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    return np.array([line.split() for line in r.stdout.strip().splitlines()], dtype=np.float64)


def assert_runs_at_every_level(tessera_bin, model):
    # Each level's kernels (scalar reference, AVX2, AVX-512: capped to what
    # the CPU has) against the NumPy forward on the file's own weights.
    want = ref.reference_logits(str(model), TOKENS)
    for level in ("scalar", "avx2", "avx512vnni"):
        assert_logits_match(logits_at_level(tessera_bin, model, level), want, QUANT_TOLERANCE)


# The low-bit K-quants and IQ4 codebooks: gguf-py decodes tessera's output
# within each format's error (relative RMS, the weights being Gaussian), the
# mix gives each tensor its type, and the model runs.
@pytest.mark.parametrize("mix,base,sensitive,bound", [("Q2_K", "Q2_K", "Q3_K", 0.3),
                                                      ("Q3_K_S", "Q3_K", None, 0.16),
                                                      ("Q3_K_M", "Q3_K", "Q4_K", 0.16),
                                                      ("IQ4_NL", "IQ4_NL", None, 0.085),
                                                      ("IQ4_XS", "IQ4_XS", None, 0.085)])
def test_low_bit_and_codebook_mixes(tmp_path, tessera_bin, f32_model, mix, base, sensitive, bound):
    out = tmp_path / f"{mix}.gguf"
    r = quantize(tessera_bin, f32_model, out, mix)
    assert r.returncode == 0, r.stderr
    src, dst = tensors(f32_model), tensors(out)
    for name, t in dst.items():
        if len(t.shape) < 2:
            continue
        want = QT.Q6_K if name == "output.weight" else QT[base]
        if sensitive and name.endswith(("attn_v.weight", "attn_output.weight", "ffn_down.weight")):
            want = QT[sensitive]
        assert t.tensor_type == want, name
        if want == QT[base]:
            err = rel_rms(decoded(t), np.asarray(src[name].data, dtype=np.float32).reshape(-1))
            assert err < bound, f"{name}: relative RMS error {err:.4f}"
    assert int(gguf.GGUFReader(str(out)).fields["general.file_type"].parts[-1][0]) == FILE_TYPE[mix]
    assert_runs_at_every_level(tessera_bin, out)


def test_mxfp4_model_runs(tmp_path, tessera_bin):
    # MXFP4 weights as gguf-py's quantizer writes them (no quantization mix
    # names MXFP4 alone: llama.cpp's MXFP4_MOE is for expert tensors).
    path = tmp_path / "tiny-mxfp4.gguf"
    subprocess.run([sys.executable, str(ROOT / "tools" / "make_tiny_model.py"), "--out", str(path),
                    "--variant", "gqa", "--wtype", "MXFP4", "--seed", "4"], check=True)
    assert any(t.tensor_type == QT.MXFP4 for t in tensors(path).values())
    assert_runs_at_every_level(tessera_bin, path)


def test_refusals(tmp_path, tessera_bin, f32_model):
    q8 = tmp_path / "q8.gguf"
    assert quantize(tessera_bin, f32_model, q8, "Q8_0").returncode == 0
    out = tmp_path / "again.gguf"
    r = quantize(tessera_bin, q8, out, "Q4_0")
    assert r.returncode == 1 and "--allow-requantize" in r.stderr
    assert not out.exists(), "no partial file is left behind"
    r = quantize(tessera_bin, q8, out, "Q4_0", "--allow-requantize")
    assert r.returncode == 0, r.stderr
    assert tensors(out)["blk.0.attn_q.weight"].tensor_type == QT.Q4_0
    r = quantize(tessera_bin, f32_model, out, "Q3_K_XL")
    assert r.returncode == 1 and "Q4_K_M" in r.stderr, "an unknown type lists the known ones"
    r = quantize(tessera_bin, f32_model, f32_model, "Q8_0")
    assert r.returncode == 2
    r = quantize(tessera_bin, tmp_path / "missing.gguf", out, "Q8_0")
    assert r.returncode == 1 and "missing.gguf" in r.stderr
    r = quantize(tessera_bin, f32_model, tmp_path / "no-such-dir" / "x.gguf", "Q8_0")
    assert r.returncode == 1 and "cannot create" in r.stderr


LLAMA_CPP_GOLDEN = json.loads((ROOT / "tests" / "golden" / "quant" / "llamacpp_tiny_gqa_seed4.json").read_text())


@pytest.mark.parametrize("mix", sorted(LLAMA_CPP_GOLDEN["mixes"]))
def test_types_and_error_against_llama_cpp(tmp_path, tessera_bin, f32_model, mix):
    # Against llama.cpp's llama-quantize on the same model (stored by
    # tools/gen_quantize_golden.py): the same type for every tensor, and a
    # dequantized error at most 5% above llama.cpp's (measured 0.99-1.01x).
    out = tmp_path / f"{mix}.gguf"
    assert quantize(tessera_bin, f32_model, out, mix).returncode == 0
    src, ours = tensors(f32_model), tensors(out)
    for name, theirs in LLAMA_CPP_GOLDEN["mixes"][mix].items():
        assert ours[name].tensor_type.name == theirs["type"], f"{name}: llama.cpp chose {theirs['type']}"
        w = np.asarray(src[name].data, dtype=np.float32).reshape(-1)
        mine = rel_rms(decoded(ours[name]), w)
        assert mine <= 1.05 * theirs["rel_rms"], f"{name}: tessera {mine:.4f}, llama.cpp {theirs['rel_rms']:.4f}"


def test_output_loads_in_llama_cpp(tmp_path, tessera_bin, f32_model):
    llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    out = tmp_path / "q4km.gguf"
    assert quantize(tessera_bin, f32_model, out, "Q4_K_M").returncode == 0
    llm = llama_cpp.Llama(str(out), n_ctx=64, logits_all=True, verbose=False, n_threads=2,
                          type_k=0, type_v=0)  # F32 KV, as `tessera logits`
    llm.eval(TOKENS)
    theirs = np.array(llm.scores[:len(TOKENS)], dtype=np.float64)
    assert_logits_match(run_tessera(tessera_bin, str(out)), theirs, QUANT_TOLERANCE)
