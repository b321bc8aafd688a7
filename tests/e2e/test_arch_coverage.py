# Proves the C++ forward pass on every attention layout and weight type: tiny
# random-weight GGUF models (tools/make_tiny_model.py) run through
# `tessera logits` and through the independent NumPy reference
# (tools/reference_forward.py) must give the same logits. The tests without
# the binary check that the Python side itself is right.
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import gguf
from gguf import GGMLQuantizationType as QT

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import make_tiny_model as tiny  # noqa: E402
import reference_forward as ref  # noqa: E402

# 16 positions: long enough that RoPE mistakes show clearly in the logits.
TOKENS = [1, 5, 9, 23, 42, 7, 3, 100, 250, 17, 64, 128, 2, 99, 31, 77]
N_VOCAB = 300

# Tolerance on max |C++ - reference| as a fraction of the logit scale
# (max |reference logit|, about 3-4 on these models). The reference runs in
# float64 on the dequantized weights, so weight quantization is not part of
# the difference; what is left is the C++ path's arithmetic:
#  - F32 weights: float32 accumulation, possibly an F16 KV cache: 2e-3.
#  - F16 weights: activations may be rounded to F16 for the matmul (ggml does);
#    simulated here at ~5e-4 of scale, so 2e-3.
#  - BF16 weights: activations may be rounded to BF16 (8-bit mantissa);
#    simulated at ~3-4e-3 of scale, so 1.5e-2.
#  - quantized weights: activations are quantized to 8 bits per block (Q8_0,
#    or Q8_K with 256-wide blocks for K-quants); Q8_0 rounding is simulated at
#    ~1-1.5e-2 of scale and Q8_K's coarser blocks add more, so 5e-2.
# A wrong RoPE mode, scaling or base, or a wrong GQA head mapping, moves
# logits by 0.18 of the scale or more on these models (checked below).
TOLERANCE = {"F32": 2e-3, "F16": 2e-3, "BF16": 1.5e-2}
QUANT_TOLERANCE = 5e-2
# Activation rounding that a tolerance class is sized for (see above).
SIMULATED_ROUNDING = {"F32": "f16", "F16": "f16", "BF16": "bf16"}


def tolerance(wtype):
    return TOLERANCE.get(wtype, QUANT_TOLERANCE)


CASES = (
    [dict(variant=v, wtype="F32") for v in ("mha", "gqa", "mqa", "qwen2")]
    + [dict(variant="gqa", wtype=w) for w in tiny.WTYPES if w != "F32"]
    + [
        dict(variant="gqa", wtype="F32", tied=True, rope_scale=2.0, freq_base=500000.0),
        dict(variant="qwen2", wtype="Q4_K", tied=True),
        dict(variant="mqa", wtype="Q6_K", seed=3),
        # YaRN with a short original context, so its ramp spans the rotated pairs.
        dict(variant="mha", wtype="F32", rope_scale=4.0, rope_scaling="yarn", rope_orig_ctx=64),
        dict(variant="qwen2", wtype="Q8_0", rope_scale=8.0, rope_scaling="yarn", rope_orig_ctx=256),
        # Llama 3 style per-dimension frequency factors (rope_freqs.weight).
        dict(variant="gqa", wtype="F32", rope_freqs=True),
        # qwen3: per-head Q/K RMSNorm, q_dim != n_embd (key_length).
        dict(variant="qwen3", wtype="F32"),
        dict(variant="qwen3", wtype="Q4_K"),
        # gemma2/3: a 5-position sliding window on the local layers (the
        # tests' 16 tokens overrun it), soft-caps (gemma2), post-norms, GeGLU,
        # gemma3's QK-norm and local RoPE base.
        dict(variant="gemma2", wtype="F32", tied=True),
        dict(variant="gemma2", wtype="Q8_0"),
        dict(variant="gemma3", wtype="F32", tied=True),
        dict(variant="gemma3", wtype="Q6_K", tied=True, rope_scale=8.0),
        # phi3: fused QKV and gate/up matrices, read as row ranges.
        dict(variant="phi3", wtype="F32"),
        dict(variant="phi3", wtype="Q4_0"),
    ]
)


def case_id(c):
    extra = [k for k in ("tied", "rope_scale", "rope_scaling", "rope_freqs", "freq_base", "seed") if k in c]
    return "-".join([c["variant"], c["wtype"]] + extra)


def build(tmp_path, **kw):
    path = tmp_path / f"{case_id(kw)}.gguf"
    args = [sys.executable, str(ROOT / "tools" / "make_tiny_model.py"), "--out", str(path),
            "--variant", kw["variant"], "--wtype", kw["wtype"], "--seed", str(kw.get("seed", 0))]
    if kw.get("tied"):
        args.append("--tied")
    if "rope_scale" in kw:
        args += ["--rope-scale", str(kw["rope_scale"])]
    if "freq_base" in kw:
        args += ["--freq-base", str(kw["freq_base"])]
    if "rope_scaling" in kw:
        args += ["--rope-scaling", kw["rope_scaling"], "--rope-orig-ctx", str(kw["rope_orig_ctx"])]
    if kw.get("rope_freqs"):
        args.append("--rope-freqs")
    subprocess.run(args, check=True)
    return str(path)


def run_tessera(bin_path, model, tokens=TOKENS):
    r = subprocess.run([bin_path, "logits", "-m", model, "--tokens", " ".join(map(str, tokens))],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"tessera logits failed ({r.returncode}): {r.stderr[-2000:]}"
    rows = [line.split() for line in r.stdout.strip().splitlines()]
    return np.array(rows, dtype=np.float64)


def assert_logits_match(got, want, tol_frac):
    """max |got - want| <= tol_frac * scale, and the same argmax at every
    position, except where the reference's top two are closer than the
    tolerance itself: there the C++ pick must be one of those near-ties."""
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    scale = np.abs(want).max()
    tol = tol_frac * scale
    diff = np.abs(got - want).max()
    assert diff <= tol, f"max abs diff {diff:.4g} > {tol:.4g} ({tol_frac} of scale {scale:.3g})"
    for pos in range(want.shape[0]):
        top2 = np.sort(want[pos])[-2:]
        pick = int(got[pos].argmax())
        if top2[1] - top2[0] > tol:
            assert pick == int(want[pos].argmax()), f"argmax differs at position {pos}"
        else:
            assert want[pos, pick] >= top2[1] - tol, f"argmax at {pos} is not a near-tie"


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_cpp_logits_match_reference(tmp_path, tessera_bin, case):
    model = build(tmp_path, **case)
    want = ref.reference_logits(model, TOKENS)
    got = run_tessera(tessera_bin, model)
    assert_logits_match(got, want, tolerance(case["wtype"]))


@pytest.mark.parametrize("variant", ["gemma2", "gemma3"])
def test_sliding_window_over_chunks_and_split_contexts(tmp_path, tessera_bin, variant):
    # 600 tokens: `tessera logits` runs them in chunks of 256, so local layers
    # read a window that straddles cached chunks, and attention splits
    # contexts at 512 positions, so pieces wholly before a window are skipped.
    model = build(tmp_path, variant=variant, wtype="F32", tied=True)
    tokens = [(7 * i + 3) % N_VOCAB for i in range(600)]
    want = ref.reference_logits(model, tokens)
    got = run_tessera(tessera_bin, model, tokens)
    assert_logits_match(got, want, tolerance("F32"))


def test_info_prints_the_architecture_parameters(tmp_path, tessera_bin):
    model = build(tmp_path, variant="gemma2", wtype="F32", tied=True)
    r = subprocess.run([tessera_bin, "info", "-m", model], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    model_part = r.stdout[r.stdout.index("\nmodel:\n"):]
    assert "architecture: gemma2" in model_part
    assert f"sliding_window: {tiny.SLIDING_WINDOW} (one global layer in every 2)" in model_part
    assert f"attn_softcap: {tiny.SOFTCAPS['gemma2'][0]:.6f}" in model_part
    assert "rope: neox" in model_part


# ------------------------------------------------------------ Python side only

def test_gguf_round_trips_through_reader(tmp_path):
    path = build(tmp_path, variant="qwen2", wtype="Q5_K", tied=True)
    r = gguf.GGUFReader(path)
    f = {k: v.contents() for k, v in r.fields.items() if not k.startswith("tokenizer.ggml.")}
    assert f["general.architecture"] == "qwen2"
    assert f["qwen2.embedding_length"] == tiny.N_EMBD
    assert f["qwen2.block_count"] == tiny.N_LAYER
    assert f["qwen2.feed_forward_length"] == tiny.N_FF
    assert (f["qwen2.attention.head_count"], f["qwen2.attention.head_count_kv"]) == (4, 2)
    assert f["qwen2.rope.dimension_count"] == 64
    assert f["qwen2.rope.freq_base"] == pytest.approx(1e6)
    assert r.fields["tokenizer.ggml.model"].contents() == "gpt2"
    assert len(r.fields["tokenizer.ggml.tokens"].contents()) == N_VOCAB
    tensors = {t.name: t for t in r.tensors}
    assert "output.weight" not in tensors  # tied
    assert QT(tensors["blk.0.attn_q.bias"].tensor_type) == QT.F32
    assert QT(tensors["blk.1.ffn_norm.weight"].tensor_type) == QT.F32
    q = tensors["blk.0.attn_q.weight"]
    assert QT(q.tensor_type) == QT.Q5_K
    assert [int(d) for d in q.shape] == [tiny.N_EMBD, 4 * 64]  # ne order: [n_in, n_out]
    assert [int(d) for d in tensors["token_embd.weight"].shape] == [tiny.N_EMBD, N_VOCAB]
    assert len(tensors) == 1 + 1 + tiny.N_LAYER * 12  # embd, output_norm, 12 per layer


def test_tensor_values_survive_the_file(tmp_path):
    # The F32 file holds exactly the float32 weights the generator drew.
    path = build(tmp_path, variant="mha", wtype="F32", seed=7)
    rng = np.random.default_rng(7)
    drawn = tiny.random_tensors(rng, "llama", 4, 4, 64, N_VOCAB, tied=False)
    m = ref.Model(path)
    for name in ("token_embd.weight", "blk.1.attn_k.weight", "blk.0.ffn_down.weight", "output.weight"):
        np.testing.assert_array_equal(m.weight(name), drawn[name].astype(np.float32))


@pytest.mark.parametrize("wtype,max_rel_rms", [("Q4_K", 0.12), ("Q5_K", 0.06), ("Q6_K", 0.03)])
def test_k_quant_encoders_decode_with_gguf(wtype, max_rel_rms):
    # Our K-quant encoders are read back by gguf-py's independent decoders; a
    # wrong bit layout scrambles values and gives errors near 100%.
    w = np.random.default_rng(1).standard_normal((8, 512)) / 16
    decoded = gguf.quants.dequantize(tiny.encode(w, QT[wtype]), QT[wtype]).reshape(w.shape)
    rel = np.sqrt(np.mean((decoded - w) ** 2) / np.mean(w ** 2))
    assert rel < max_rel_rms


def test_reference_on_quantized_copies_tracks_f32(tmp_path):
    # Same seed -> same underlying weights; only their encoding differs, so
    # logits differ by roughly the weight quantization error.
    base = ref.reference_logits(build(tmp_path, variant="gqa", wtype="F32"), TOKENS)
    scale = np.abs(base).max()
    for wtype, bound in [("F16", 2e-3), ("BF16", 1e-2), ("Q8_0", 3e-2), ("Q6_K", 8e-2), ("Q4_0", 0.35)]:
        other = ref.reference_logits(build(tmp_path, variant="gqa", wtype=wtype), TOKENS)
        assert np.abs(other - base).max() / scale < bound, wtype
    q8 = ref.reference_logits(build(tmp_path, variant="gqa", wtype="Q8_0"), TOKENS)
    assert (q8.argmax(axis=1) == base.argmax(axis=1)).all()


def test_reference_is_causal(tmp_path):
    path = build(tmp_path, variant="qwen2", wtype="F32")
    full = ref.reference_logits(path, TOKENS)
    prefix = ref.reference_logits(path, TOKENS[:3])
    np.testing.assert_allclose(prefix, full[:3], rtol=0, atol=1e-10)
    changed = ref.reference_logits(path, TOKENS[:3] + [200] + TOKENS[4:])
    np.testing.assert_allclose(changed[:3], full[:3], rtol=0, atol=1e-10)
    assert np.abs(changed[3:] - full[3:]).max() > 1e-3


@pytest.mark.parametrize("mode", ["normal", "neox"])
def test_rope_depends_only_on_relative_position(mode):
    cfg = ref.Config(arch="", n_embd=0, n_layer=0, n_head=1, n_head_kv=1, head_dim=16,
                     rope_dims=16, eps=0, freq_base=10000.0, freq_scale=0.5, rope_mode=mode)
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((1, 1, 16)), rng.standard_normal((1, 1, 16))
    def score(m, n):
        return float(np.sum(ref.rope(q, np.array([m]), cfg) * ref.rope(k, np.array([n]), cfg)))
    assert score(5, 2) == pytest.approx(score(105, 102), abs=1e-9)
    assert score(0, 0) == pytest.approx(float(np.sum(q * k)), abs=1e-12)  # position 0: identity
    assert abs(score(5, 2) - score(5, 3)) > 1e-6


def test_rope_modes_differ_by_a_permutation():
    # NeoX on halves equals normal on adjacent pairs after interleaving the
    # halves: x -> (x0, x8, x1, x9, ...), which is what llama.cpp's converter
    # undoes when it permutes Hugging Face Q/K weights for the llama arch.
    base = dict(arch="", n_embd=0, n_layer=0, n_head=1, n_head_kv=1, head_dim=16,
                rope_dims=16, eps=0, freq_base=10000.0, freq_scale=1.0)
    normal = ref.Config(rope_mode="normal", **base)
    neox = ref.Config(rope_mode="neox", **base)
    x = np.random.default_rng(2).standard_normal((3, 2, 16))
    perm = np.arange(16).reshape(2, 8).T.reshape(-1)  # 0, 8, 1, 9, ...
    pos = np.array([0, 3, 17])
    np.testing.assert_allclose(ref.rope(x[..., perm], pos, normal), ref.rope(x, pos, neox)[..., perm],
                               atol=1e-12)


@pytest.mark.parametrize("wtype", ["F32", "F16", "BF16", "Q8_0", "Q4_K", "Q6_K"])
def test_tolerances_cover_simulated_activation_rounding(tmp_path, wtype):
    # The e2e tolerance for each weight type must leave at least 2x headroom
    # over the error that rounding matmul inputs (as the C++ path may) adds.
    path = build(tmp_path, variant="gqa", wtype=wtype)
    exact = ref.reference_logits(path, TOKENS)
    rounded = ref.reference_logits(path, TOKENS, SIMULATED_ROUNDING.get(wtype, "q8_0"))
    err = np.abs(rounded - exact).max() / np.abs(exact).max()
    assert 2 * err < tolerance(wtype), f"simulated error {err:.4g} vs tolerance {tolerance(wtype)}"


def test_gemma_files_follow_llama_cpp_layout(tmp_path):
    path = build(tmp_path, variant="gemma3", wtype="F32", tied=True)
    r = gguf.GGUFReader(path)
    f = {k: v.contents() for k, v in r.fields.items() if not k.startswith("tokenizer.ggml.")}
    assert f["general.architecture"] == "gemma3"
    assert f["gemma3.attention.sliding_window"] == tiny.SLIDING_WINDOW
    assert (f["gemma3.attention.key_length"], f["gemma3.attention.head_count"]) == (64, 8)
    names = {t.name for t in r.tensors}
    for suffix in ("attn_q_norm", "attn_k_norm", "post_attention_norm", "ffn_norm", "post_ffw_norm"):
        assert f"blk.5.{suffix}.weight" in names
    assert "output.weight" not in names
    g2 = gguf.GGUFReader(build(tmp_path, variant="gemma2", wtype="F32"))
    assert g2.fields["gemma2.attn_logit_softcapping"].contents() == pytest.approx(tiny.SOFTCAPS["gemma2"][0])
    assert "blk.0.attn_q_norm.weight" not in {t.name for t in g2.tensors}


def test_gemma_attention_forgets_positions_outside_the_window():
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((12, 2, 8)) for _ in range(3))
    window = 4
    base = ref.gemma_attention(q, k, v, 0.3, window, 0.0)
    k2, v2 = k.copy(), v.copy()
    k2[2], v2[2] = rng.standard_normal((2, 8)), rng.standard_normal((2, 8))
    moved = ref.gemma_attention(q, k2, v2, 0.3, window, 0.0)
    changed = np.abs(moved - base).max(axis=1) > 1e-12
    # Position 2 is seen by queries 2..5 (q - 2 < 4) and by nobody after.
    assert changed.tolist() == [False, False, True, True, True, True] + [False] * 6


@pytest.mark.parametrize("variant,changes", [
    ("gemma2", dict(sliding_window=0)),      # window ignored
    ("gemma2", dict(attn_softcap=0.0)),      # attention soft-cap ignored
    ("gemma2", dict(final_softcap=0.0)),     # final soft-cap ignored
    ("gemma3", dict(layer_pattern=2)),       # gemma2's layer pattern
    ("gemma3", dict(query_pre_attn_scalar=128.0)),  # query scale
    ("gemma3", dict(freq_base=10000.0)),     # local RoPE base on global layers
    ("qwen3", dict(arch="qwen2")),           # QK-norm skipped
])
def test_tolerances_reject_architecture_bugs(tmp_path, variant, changes):
    path = build(tmp_path, variant=variant, wtype="F32", tied=variant != "qwen3")
    exact = ref.reference_logits(path, TOKENS)
    m = ref.Model(path)
    for key, value in changes.items():
        setattr(m.cfg, key, value)
    with pytest.raises(AssertionError):
        assert_logits_match(ref.forward(m, TOKENS), exact, QUANT_TOLERANCE)


@pytest.mark.parametrize("tensor,parts", [("ffn_up", 2), ("attn_qkv", [256, 384])])
def test_phi3_fused_row_order_matters(tmp_path, tensor, parts):
    # Reading a fused phi3 matrix's row ranges in the wrong order (up as
    # gate, or K rows as Q) fails the loosest tolerance.
    path = build(tmp_path, variant="phi3", wtype="F32")
    exact = ref.reference_logits(path, TOKENS)
    m = ref.Model(path)
    for i in range(m.cfg.n_layer):
        name = f"blk.{i}.{tensor}.weight"
        m._cache[name] = np.concatenate(np.split(m.weight(name), parts)[::-1])
    with pytest.raises(AssertionError):
        assert_logits_match(ref.forward(m, TOKENS), exact, QUANT_TOLERANCE)


def test_generator_rejects_rope_mode_the_arch_cannot_express(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "make_tiny_model.py"),
                        "--out", str(tmp_path / "x.gguf"), "--variant", "qwen2", "--rope", "normal"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "neox" in r.stderr


def tiled_attention(q, k, v):
    """Bug model for the test below: query head h reads kv head h % n_head_kv
    instead of h // (n_head / n_head_kv)."""
    group = q.shape[1] // k.shape[1]
    n_tok, n_head, hd = q.shape
    k, v = np.tile(k, (1, group, 1)), np.tile(v, (1, group, 1))
    scores = np.einsum("thd,shd->hts", q, k) / np.sqrt(hd)
    scores[:, np.triu(np.ones((n_tok, n_tok), dtype=bool), k=1)] = -np.inf
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return np.einsum("hts,shd->thd", p, v).reshape(n_tok, n_head * hd)


def test_tolerances_reject_plausible_bugs(tmp_path, monkeypatch):
    # Even the loosest tolerance must fail forward passes with a typical bug.
    path = build(tmp_path, variant="gqa", wtype="F32", rope_scale=2.0)
    exact = ref.reference_logits(path, TOKENS)

    def buggy(**changes):
        m = ref.Model(path)
        for key, value in changes.items():
            setattr(m.cfg, key, value)
        return ref.forward(m, TOKENS)

    bugs = {
        "rope mode": buggy(rope_mode="neox"),
        "rope scaling ignored": buggy(freq_scale=1.0),
        "rope base": buggy(freq_base=1e6),
    }
    monkeypatch.setattr(ref, "attention", tiled_attention)
    bugs["gqa head mapping"] = ref.reference_logits(path, TOKENS)
    for name, logits in bugs.items():
        with pytest.raises(AssertionError):
            assert_logits_match(logits, exact, QUANT_TOLERANCE)
            pytest.fail(f"a forward pass with a wrong {name} passes the tolerance")
