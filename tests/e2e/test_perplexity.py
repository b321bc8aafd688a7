# `tessera perplexity`: llama.cpp's chunked scoring (second half of each
# chunk), the same figures whatever the batching, --save-logits /
# --kl-divergence for comparing KV types (asserted bounds), hostile
# reference files, and the perplexity against llama.cpp's on the same text
# and settings (tests/golden/perplexity/, tools/gen_perplexity_golden.py).
import json
import pathlib
import re
import struct
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "perplexity"
# Every Debian system has it (base-files): 35 KB of English prose.
TEXT = pathlib.Path("/usr/share/common-licenses/GPL-3")
CTX, CHUNKS = 256, 4
# KL(f32 KV || other KV) on this text, measured 0.0031 (f16), 0.0031 (bf16),
# 0.0045 (q8_0) mean with 96-97% top-1 agreement; bounds ~2x above.
KV_BOUNDS = {"f16": (0.007, 0.93), "bf16": (0.007, 0.93), "q8_0": (0.01, 0.92)}

pytestmark = pytest.mark.skipif(not TEXT.exists(), reason=f"{TEXT} is missing (not a Debian system)")


def perplexity(tessera_bin, model_path, *extra, ctx=CTX, chunks=CHUNKS):
    r = subprocess.run([tessera_bin, "perplexity", "-m", model_path, "-f", str(TEXT), "-c", str(ctx),
                        "--chunks", str(chunks), "-t", "2", *extra], capture_output=True, text=True, timeout=600)
    return r


def parse(stdout):
    out = {"ppl": float(re.search(r"^perplexity: ([\d.]+) \+/- ([\d.]+)", stdout, re.M).group(1))}
    if m := re.search(r"KL divergence: mean ([\d.e+-]+) \+/- [\d.e+-]+, median ([\d.e+-]+), p99 ([\d.e+-]+)", stdout):
        out["kl_mean"], out["kl_median"], out["kl_p99"] = map(float, m.groups())
    if m := re.search(r"^reference perplexity: ([\d.]+)", stdout, re.M):
        out["ref_ppl"] = float(m.group(1))
    if m := re.search(r"top-1 agreement: ([\d.]+) \+/- [\d.]+%", stdout):
        out["top1"] = float(m.group(1)) / 100
    return out


@pytest.fixture(scope="module")
def reference(tessera_bin, model_path, tmp_path_factory):
    path = tmp_path_factory.mktemp("ppl") / "ref-f32.bin"
    r = perplexity(tessera_bin, model_path, "--kv-type", "f32", "--save-logits", str(path))
    assert r.returncode == 0, r.stderr
    return path, parse(r.stdout)


def test_perplexity_matches_llama_cpp(tessera_bin, model_path):
    # The whole text (14 chunks of 512): on 4 chunks of 256 the two engines'
    # rounding differences still move the figure by 0.5%; here by 0.08%.
    golden = json.loads((GOLDEN / "smollm2_gpl3_c512.json").read_text())
    r = perplexity(tessera_bin, model_path, "--kv-type", "f32", ctx=golden["n_ctx"], chunks=golden["n_chunks"])
    assert r.returncode == 0, r.stderr
    ppl = parse(r.stdout)["ppl"]
    assert abs(ppl - golden["perplexity"]) <= 0.005 * golden["perplexity"], \
        f"tessera {ppl:.4f}, llama.cpp {golden['perplexity']:.4f}"


def test_distributions_match_llama_cpp(tessera_bin, model_path):
    # KL(llama.cpp || tessera) over llama.cpp's top-8: measured mean 0.0024,
    # top-1 agreement 96.9% (both F32 KV); the same size as tessera's own
    # f32-vs-f16 KV difference.
    golden = json.loads((GOLDEN / "smollm2_gpl3_c256.json").read_text())
    assert (golden["n_ctx"], golden["n_chunks"]) == (CTX, CHUNKS)
    r = perplexity(tessera_bin, model_path, "--kv-type", "f32", "--kl-divergence",
                   str(GOLDEN / "smollm2_gpl3_c256_top8.bin"))
    assert r.returncode == 0, r.stderr
    got = parse(r.stdout)
    assert got["kl_mean"] < 0.005 and got["top1"] >= 0.94, got


def test_batching_does_not_change_the_figures(tessera_bin, model_path, reference):
    path, base = reference
    r = perplexity(tessera_bin, model_path, "--kv-type", "f32", "--parallel", "1", "-b", "96",
                   "--kl-divergence", str(path))
    assert r.returncode == 0, r.stderr
    got = parse(r.stdout)
    assert got["ppl"] == pytest.approx(base["ppl"], rel=1e-4)
    assert got["kl_mean"] < 1e-5 and got["top1"] == 1.0


@pytest.mark.parametrize("kv", sorted(KV_BOUNDS))
def test_kv_types_against_f32(tessera_bin, model_path, reference, kv):
    r = perplexity(tessera_bin, model_path, "--kv-type", kv, "--kl-divergence", str(reference[0]))
    assert r.returncode == 0, r.stderr
    got = parse(r.stdout)
    max_kl, min_top1 = KV_BOUNDS[kv]
    assert 0 < got["kl_mean"] < max_kl, got
    assert got["top1"] >= min_top1, got
    assert abs(got["ppl"] - reference[1]["ppl"]) < 0.05 * reference[1]["ppl"]


def test_q8_0_kv_costs_little_more_than_f16(tessera_bin, model_path, reference):
    # Hadamard-rotated q8_0 K/V (kernels/kv_rotation.h) against f32: measured
    # 0.00342 mean KL, 1.09x f16's 0.00314; with the rotation removed 0.00445
    # (1.42x), which this bound fails.
    kl = {}
    for kv in ("f16", "q8_0"):
        r = perplexity(tessera_bin, model_path, "--kv-type", kv, "--kl-divergence", str(reference[0]))
        assert r.returncode == 0, r.stderr
        kl[kv] = parse(r.stdout)["kl_mean"]
    assert kl["q8_0"] < 1.25 * kl["f16"], kl


def test_full_vocabulary_reference_from_llama_cpp(tessera_bin, model_path):
    # llama.cpp's own --kl-divergence-base file (tools/gen_llama_kld_golden.sh):
    # the perplexity tessera decodes from it is llama.cpp's (u16 log-probs
    # round by < 2.5e-4 nats), and tessera's distributions sit close to it:
    # measured KL 0.0033 mean over the 8 positions, 7 of 8 top-1 the same.
    golden = json.loads((GOLDEN / "smollm2_gpl3_c10_llama.json").read_text())
    r = perplexity(tessera_bin, model_path, "--kv-type", "f32", "--kl-divergence",
                   str(GOLDEN / "smollm2_gpl3_c10_llama.kld"), ctx=golden["n_ctx"], chunks=golden["n_chunks"])
    assert r.returncode == 0, r.stderr
    assert "(full vocabulary)" in r.stdout
    got = parse(r.stdout)
    assert got["ref_ppl"] == pytest.approx(golden["perplexity"], rel=1e-3)
    assert got["ppl"] == pytest.approx(golden["perplexity"], rel=0.03)
    assert got["kl_mean"] < 0.02 and got["top1"] >= 0.75, got
    # A prefix of the reference's chunks compares too (llama.cpp's running figures).
    r = perplexity(tessera_bin, model_path, "--kv-type", "f32", "--kl-divergence",
                   str(GOLDEN / "smollm2_gpl3_c10_llama.kld"), ctx=golden["n_ctx"], chunks=1)
    assert r.returncode == 0 and "first 1 of the reference's 2 chunks" in r.stderr, r.stderr


def test_saves_llama_cpp_layout(tessera_bin, model_path, tmp_path):
    # --save-format llama writes the file llama-perplexity --kl-divergence
    # reads (checked by hand: llama.cpp's "Mean PPL(base)" equals tessera's
    # perplexity); read back, a run compares with itself up to the u16 grid.
    path = tmp_path / "ref.kld"
    r = perplexity(tessera_bin, model_path, "--kv-type", "f32", "--save-logits", str(path), "--save-format", "llama",
                   ctx=64, chunks=2)
    assert r.returncode == 0, r.stderr
    assert path.stat().st_size == 20 + 4 * 64 * 2 + 2 * 31 * (49152 + 4) * 2
    r = perplexity(tessera_bin, model_path, "--kv-type", "f32", "--kl-divergence", str(path), ctx=64, chunks=2)
    assert r.returncode == 0, r.stderr
    got = parse(r.stdout)
    assert got["kl_mean"] < 1e-4 and got["top1"] == 1.0 and got["ref_ppl"] == pytest.approx(got["ppl"], rel=1e-4)


@pytest.mark.parametrize("case", ["truncated", "padded", "other_text", "other_chunking", "more_chunks",
                                  "bad_scale", "vocab"])
def test_hostile_llama_cpp_reference_files(tessera_bin, model_path, tmp_path, case):
    good = (GOLDEN / "smollm2_gpl3_c10_llama.kld").read_bytes()
    n_ctx, n_chunks, row0 = 10, 2, 20 + 4 * 10 * 2
    bad = {
        "truncated": lambda: good[:-1],
        "padded": lambda: good + b"\0\0",
        "other_text": lambda: good[:24] + struct.pack("<i", 7) + good[28:],
        "other_chunking": lambda: good,  # run below with another -c
        "more_chunks": lambda: good,  # run below with more chunks than it holds
        "bad_scale": lambda: good[:row0] + struct.pack("<f", float("nan")) + good[row0 + 4:],
        "vocab": lambda: good[:12] + struct.pack("<i", 100) + good[16:],
    }[case]()
    path = tmp_path / f"{case}.kld"
    path.write_bytes(bad)
    r = perplexity(tessera_bin, model_path, "--kl-divergence", str(path),
                   ctx=n_ctx + 2 if case == "other_chunking" else n_ctx,
                   chunks=n_chunks + 1 if case == "more_chunks" else n_chunks)
    assert r.returncode == 1, (case, r.returncode, r.stderr[-500:])
    assert "tessera perplexity:" in r.stderr and "Sanitizer" not in r.stderr


def write_header(path, n_vocab=49152, n_ctx=CTX, top_k=2, n_positions=1, text_hash=0, magic=b"TSRL", version=1):
    path.write_bytes(magic + struct.pack("<4I2Q", version, n_vocab, n_ctx, top_k, n_positions, text_hash))


@pytest.mark.parametrize("case", ["empty", "magic", "version", "truncated", "bad_token", "positive_logprob",
                                  "huge_count", "other_text"])
def test_hostile_reference_files(tessera_bin, model_path, reference, tmp_path, case):
    bad = tmp_path / f"{case}.bin"
    good = reference[0].read_bytes()
    if case == "empty":
        bad.write_bytes(b"")
    elif case == "magic":
        bad.write_bytes(b"XXXX" + good[4:])
    elif case == "version":
        bad.write_bytes(good[:4] + struct.pack("<I", 9) + good[8:])
    elif case == "truncated":
        bad.write_bytes(good[:-3])
    elif case == "bad_token":
        write_header(bad)
        bad.write_bytes(bad.read_bytes() + struct.pack("<fifif", 1.0, 10**8, -0.5, 0, -1.0))
    elif case == "positive_logprob":
        write_header(bad)
        bad.write_bytes(bad.read_bytes() + struct.pack("<fifif", 1.0, 5, 0.5, 6, -1.0))
    elif case == "huge_count":
        write_header(bad, n_positions=2**62)
    elif case == "other_text":
        bad.write_bytes(good[:28] + struct.pack("<Q", 12345) + good[36:])
    r = perplexity(tessera_bin, model_path, "--kl-divergence", str(bad))
    assert r.returncode == 1, (case, r.returncode, r.stderr[-500:])
    assert "tessera perplexity:" in r.stderr and "Sanitizer" not in r.stderr


def test_text_shorter_than_a_chunk(tessera_bin, model_path):
    r = perplexity(tessera_bin, model_path, ctx=1 << 16)
    assert r.returncode == 1 and "fewer than one chunk" in r.stderr
