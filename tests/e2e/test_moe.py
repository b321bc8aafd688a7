# Mixture-of-experts architectures (qwen3moe, qwen2moe, olmoe, granitemoe,
# mixtral):
# tiny random-weight models (tools/make_random_moe.py) run through
# `tessera logits` and through the independent NumPy reference
# (tools/reference_forward.py) must give the same logits on several
# prompts, and each MoE feature the reference implements (top-k, the
# renormalisation, the shared expert, olmoe's QK-norm, granite's multipliers)
# must matter: turning it
# off in the reference moves the logits past the tolerance.
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
import make_random_moe as moe  # noqa: E402
import make_tiny_model as tiny  # noqa: E402
import reference_forward as ref  # noqa: E402
from test_arch_coverage import assert_logits_match, run_tessera, tolerance  # noqa: E402

PROMPTS = [
    [1, 5, 9, 23, 42, 7, 3, 100, 250, 17, 64, 128, 2, 99, 31, 77],
    [299, 0, 150, 150, 150, 8, 42, 201, 13],
    [77, 12, 190, 45, 260, 3, 3, 88, 120, 7, 56, 211, 9, 33, 140, 2, 71, 19, 230, 64],
]
ARCHS = sorted(moe.ARCHS)
CASES = [dict(arch=a, wtype="F32") for a in ARCHS] + [
    dict(arch="qwen3moe", wtype="Q8_0"),
    dict(arch="qwen2moe", wtype="F16"),
    dict(arch="olmoe", wtype="Q4_K"),
    dict(arch="mixtral", wtype="Q8_0"),
    dict(arch="granitemoe", wtype="Q4_0"),
]
# With quantized weights the C++ router sees activations that went through
# 8-bit matmul inputs (about 1% off): where the reference's k-th and
# (k+1)-th router probabilities are closer than that, either choice is right
# and the two may differ (the MoE form of the argmax near-tie rule). Those
# cases run on prompts whose every routing decision clears this margin:
# PROMPTS that do, then seeded random 8-token ones, until there are
# N_QUANT_PROMPTS.
ROUTING_MARGIN_MIN = 0.01
N_QUANT_PROMPTS = 3


def prompts_for(m, wtype):
    if wtype in ("F32", "F16"):
        return PROMPTS
    chosen = [p for p in PROMPTS if ref.routing_margin(m, p) >= ROUTING_MARGIN_MIN]
    rng = np.random.default_rng(1)
    for _ in range(100):
        if len(chosen) >= N_QUANT_PROMPTS:
            break
        p = rng.integers(0, 300, 8).tolist()
        if ref.routing_margin(m, p) >= ROUTING_MARGIN_MIN:
            chosen.append(p)
    assert len(chosen) >= N_QUANT_PROMPTS, "too few prompts with clear routing"
    return chosen[:N_QUANT_PROMPTS]


def case_id(c):
    return f"{c['arch']}-{c['wtype']}"


def build(tmp_path, arch, wtype="F32", seed=0):
    path = tmp_path / f"{arch}-{wtype}-{seed}.gguf"
    if not path.exists():
        moe.write_model(str(path), arch, "tiny", wtype, seed)
    return str(path)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_cpp_logits_match_reference(tmp_path, tessera_bin, case):
    path = build(tmp_path, case["arch"], case["wtype"])
    m = ref.Model(path)
    for tokens in prompts_for(m, case["wtype"]):
        want = ref.forward(m, tokens)
        got = run_tessera(tessera_bin, path, tokens)
        try:
            assert_logits_match(got, want, tolerance(case["wtype"]))
        except AssertionError as e:
            raise AssertionError(f"{e} (prompt {tokens[:4]}..., routing margin "
                                 f"{ref.routing_margin(m, tokens):.3g})") from None


def test_dense_granite_matches_reference(tmp_path, tessera_bin):
    # granite is llama's layer with granitemoe's multipliers (and no experts).
    path = str(tmp_path / "granite.gguf")
    tiny.write_model(path, "granite", "F32")
    m = ref.Model(path)
    for tokens in PROMPTS:
        assert_logits_match(run_tessera(tessera_bin, path, tokens), ref.forward(m, tokens), tolerance("F32"))
    for key in ("embedding_scale", "residual_scale", "logit_scale", "attn_scale"):
        bug = ref.Model(path)
        setattr(bug.cfg, key, 0.0)
        with pytest.raises(AssertionError):
            assert_logits_match(ref.forward(bug, PROMPTS[0]), ref.forward(m, PROMPTS[0]), tolerance("Q4_K"))


def test_info_prints_the_experts(tmp_path, tessera_bin):
    r = subprocess.run([tessera_bin, "info", "-m", build(tmp_path, "qwen2moe")], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert "architecture: qwen2moe" in r.stdout
    assert "experts: 8 (2 used, ffn 256, softmax)" in r.stdout  # qwen2moe: no renormalisation
    assert "shared_expert: ffn 256 (sigmoid gate)" in r.stdout
    r = subprocess.run([tessera_bin, "info", "-m", build(tmp_path, "mixtral")], capture_output=True, text=True,
                       timeout=60)
    assert "architecture: llama" in r.stdout and "experts: 8 (2 used, ffn 256, softmax, renormalised)" in r.stdout


# ------------------------------------------------------------ Python side only

@pytest.mark.parametrize("arch,changes", [
    ("qwen3moe", dict(n_expert_used=1)),       # top-1 instead of top-2
    ("qwen3moe", dict(n_expert_used=3)),
    ("qwen3moe", dict(norm_topk=False)),       # weights not renormalised
    ("mixtral", dict(norm_topk=False)),
    ("olmoe", dict(norm_topk=True)),           # olmoe must not renormalise
    ("olmoe", dict(n_expert_used=3)),
    ("olmoe", dict(arch="qwen2moe")),          # QK-norm skipped
    ("qwen2moe", dict(shared_expert=False)),   # shared expert dropped
    ("qwen2moe", dict(n_expert_used=1)),
    ("granitemoe", dict(norm_topk=False)),
    ("granitemoe", dict(embedding_scale=0.0)),  # each multiplier left out
    ("granitemoe", dict(residual_scale=0.0)),
    ("granitemoe", dict(logit_scale=0.0)),
    ("granitemoe", dict(attn_scale=0.0)),
])
def test_tolerances_reject_moe_bugs(tmp_path, arch, changes):
    path = build(tmp_path, arch)
    exact = ref.reference_logits(path, PROMPTS[0])
    m = ref.Model(path)
    for key, value in changes.items():
        setattr(m.cfg, key, value)
    with pytest.raises(AssertionError):
        assert_logits_match(ref.forward(m, PROMPTS[0]), exact, tolerance("Q4_K"))


def test_expert_tensors_follow_llama_cpp_layout(tmp_path):
    import gguf
    r = gguf.GGUFReader(build(tmp_path, "qwen2moe"))
    t = {x.name: x for x in r.tensors}
    # ggml order: [n_embd, n_ff_exp, n_expert] for gate/up, [n_ff_exp, n_embd, n_expert] for down.
    assert [int(d) for d in t["blk.0.ffn_gate_exps.weight"].shape] == [256, 256, 8]
    assert [int(d) for d in t["blk.1.ffn_down_exps.weight"].shape] == [256, 256, 8]
    assert [int(d) for d in t["blk.0.ffn_gate_inp.weight"].shape] == [256, 8]
    assert [int(d) for d in t["blk.0.ffn_gate_inp_shexp.weight"].shape] == [256]
    assert r.fields["qwen2moe.expert_used_count"].contents() == 2
    assert "blk.0.ffn_gate.weight" not in t


def test_reference_experts_are_the_tensor_slices(tmp_path):
    # An expert's output is what its own slice of the 3-D tensors computes:
    # a reference that read another expert's slice would differ.
    path = build(tmp_path, "olmoe")
    m = ref.Model(path)
    gate = m.weight("blk.0.ffn_gate_exps.weight")
    assert gate.shape == (8, 256, 256)
    x = np.random.default_rng(0).standard_normal((3, 256))
    np.testing.assert_allclose(m.linear(x, "blk.0.ffn_gate_exps.weight", 5), x @ gate[5].T)
    assert np.abs(m.linear(x, "blk.0.ffn_gate_exps.weight", 5) - m.linear(x, "blk.0.ffn_gate_exps.weight", 4)).max() > 0.1


# ------------------------------------------------------------ serving

def test_served_greedy_matches_reference_and_metrics_count_experts(tmp_path, tessera_bin):
    # Through the engine (paged KV, ragged batches of prefills and decodes),
    # greedy completions equal the reference's alone and together, and
    # /metrics counts the tokens each expert got.
    import concurrent.futures

    import httpx
    from server_fixture import MODEL_ID, ServerProcess
    from test_arch_serving import same_text

    path = build(tmp_path, "qwen2moe")
    m = ref.Model(path)
    eos, max_tokens = 299, 6
    prompts = [[(13 * i + 7 * j + 1) % eos for j in range(n)] for i, n in enumerate([3, 9, 17, 6])]

    def greedy(prompt):
        ids = list(prompt)
        for _ in range(max_tokens):
            nxt = int(ref.forward(m, ids)[-1].argmax())
            if nxt == eos:
                break
            ids.append(nxt)
        return ids[len(prompt):]

    srv = ServerProcess(tessera_bin, path, ["--ctx-size", "512"])
    try:
        def complete(prompt):
            r = httpx.post(srv.base_url + "/v1/completions", timeout=120,
                           json={"model": MODEL_ID, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0})
            assert r.status_code == 200, r.text
            return same_text(r.json()["choices"][0]["text"])

        def detokenize(ids):
            r = httpx.post(srv.base_url + "/detokenize", json={"tokens": ids}, timeout=30)
            assert r.status_code == 200, r.text
            return same_text(r.json()["content"])

        def expert_tokens():
            text = httpx.get(srv.base_url + "/metrics", timeout=30).text
            counts = {}
            for line in text.splitlines():
                if line.startswith("tessera_moe_expert_tokens_total{"):
                    counts[line.split('"')[1]] = int(line.split()[-1])
            return counts

        before = sum(expert_tokens().values())  # a warm-up pass, if any, counts too
        want = [detokenize(greedy(p)) for p in prompts]
        assert len(set(want)) > 1
        assert [complete(p) for p in prompts] == want
        with concurrent.futures.ThreadPoolExecutor(len(prompts)) as pool:
            assert list(pool.map(complete, prompts)) == want
        counts = expert_tokens()
        assert sorted(counts, key=int) == [str(e) for e in range(8)]
        total = sum(counts.values()) - before
        # Every token run is routed to 2 experts in each of 2 layers.
        assert total > 0 and total % 4 == 0
        assert sum(1 for c in counts.values() if c > 0) > 2
    finally:
        assert srv.stop() == 0, srv.final_log


def test_bench_counts_the_weights_a_token_reads(tmp_path, tessera_bin):
    # A token reads each layer's attention, its router, k of the n experts
    # and the shared expert, then the output head (and one embedding row).
    import json

    import gguf
    path = build(tmp_path, "qwen2moe")
    t = {x.name: x for x in gguf.GGUFReader(path).tensors}
    k, n_expert = 2, 8
    want = int(t["output.weight"].n_bytes) + int(t["token_embd.weight"].n_bytes) // 300
    for name, info in t.items():
        if not name.startswith("blk.") or (len(info.shape) == 1 and "shexp" not in name):
            continue  # norms and biases are not matrices (the shared expert's gate row is)
        share = k / n_expert if name.endswith("_exps.weight") else 1.0
        want += int(info.n_bytes) * share
    r = subprocess.run([tessera_bin, "bench", "-m", path, "-p", "0", "-n", "2", "-b", "0", "-r", "1", "--bw-mib", "0",
                        "--peak-reps", "0", "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["weight_bytes_per_token"] == pytest.approx(want)
