# The real Gemma 3 270M (scripts/fetch_model.sh gemma3-270m) through
# `tessera serve`: greedy completions of the golden prompts agree with
# llama.cpp's greedy tokens (tests/golden/generation/gemma3_270m_q4_k_m.json,
# tools/gen_golden_generation.py) up to the first near-tie, alone and with
# the requests batched together. The two long prompts (over 1,000 tokens)
# pass the 512-position sliding window of the local layers; the sanitized
# build, ~20x slower, runs the short ones only. The logit-level comparison over every
# golden position is GenerationGolden.Gemma3AgreesWithLlamaCppUpToNearTies.
import concurrent.futures
import json
import os
import pathlib

import httpx
import pytest
from server_fixture import MODEL_ID, ServerProcess

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "generation" / "gemma3_270m_q4_k_m.json"
MAX_TOKENS = 12
# The unit golden test's near-tie margin: where llama.cpp's top two logits
# are closer than this, either pick is a correct greedy step.
TIE_MARGIN = 0.5
SANITIZED = "asan" in os.environ.get("TESSERA_BIN", "")


def agreed_prefix(case):
    """llama.cpp's greedy tokens up to (not including) its first near-tie."""
    out = []
    for tok, top in zip(case["tokens"][:MAX_TOKENS], case["top_logits"]):
        if top[0][1] - top[1][1] < TIE_MARGIN:
            break
        out.append(tok)
    return out


def model_path():
    path = os.environ.get("TESSERA_GEMMA3_MODEL") or str(ROOT / "models" / "gemma-3-270m-q4_k_m.gguf")
    if not os.path.exists(path):
        if os.environ.get("CI"):
            pytest.fail("CI must fetch Gemma 3 270M (scripts/fetch_model.sh gemma3-270m)")
        pytest.skip("Gemma 3 270M not fetched (scripts/fetch_model.sh gemma3-270m)")
    return path


def gauge(srv, name):
    r = httpx.get(srv.base_url + "/metrics", timeout=30)
    assert r.status_code == 200, r.text
    return float(next(line.split()[-1] for line in r.text.splitlines() if line.startswith(name)))


@pytest.fixture(scope="module")
def served(tessera_bin):
    srv = ServerProcess(tessera_bin, model_path(), ["--ctx-size", "2048"])
    yield srv
    assert srv.stop() == 0, srv.final_log


def complete(srv, prompt_tokens):
    r = httpx.post(srv.base_url + "/v1/completions", timeout=300,
                   json={"model": MODEL_ID, "prompt": prompt_tokens, "max_tokens": MAX_TOKENS, "temperature": 0})
    assert r.status_code == 200, r.text
    return r.json()["choices"][0]["text"]


def detokenize(srv, tokens):
    r = httpx.post(srv.base_url + "/detokenize", json={"tokens": tokens}, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()["content"]


def test_prompts_tokenize_as_llama_cpp_does(served):
    for case in json.loads(GOLDEN.read_text())["cases"]:
        r = httpx.post(served.base_url + "/tokenize", json={"content": case["prompt"], "add_special": True}, timeout=30)
        assert r.status_code == 200, r.text
        assert r.json()["tokens"] == case["prompt_tokens"], case["name"]


def test_greedy_completions_agree_with_llama_cpp_alone_and_batched(served):
    cases = [c for c in json.loads(GOLDEN.read_text())["cases"] 
             if len(c["prompt_tokens"]) <= 64 or not SANITIZED]
    assert len(cases) >= 9
    # The golden's prompt ids already start with BOS; the server adds none to
    # a prompt given as ids.
    prompts = [c["prompt_tokens"] for c in cases]
    wants = [detokenize(served, agreed_prefix(c)) for c in cases]
    assert sum(len(w) for w in wants) > 100  # the check compares real text, not empty prefixes
    alone = [complete(served, p) for p in prompts]
    with concurrent.futures.ThreadPoolExecutor(len(prompts)) as pool:
        together = list(pool.map(lambda p: complete(served, p), prompts))
    for case, want, a, t in zip(cases, wants, alone, together):
        assert a.startswith(want), f"{case['name']}: {a!r} does not start with llama.cpp's {want!r}"
        assert t.startswith(want), f"{case['name']} batched: {t!r} does not start with llama.cpp's {want!r}"


@pytest.mark.skipif(SANITIZED, reason="the long prompts take minutes in the sanitized build")
def test_window_pool_keeps_llama_cpp_s_tokens_past_the_window(tessera_bin):
    # 4 sequences: the local layers' own pool (4 windows of 32 blocks, 3
    # partial blocks each, and a 512-token step: 172 blocks) is smaller than
    # the main pool (4096 tokens: 256 blocks), so the engine uses it, and the
    # long prompts run with the blocks behind each window freed as they go.
    srv = ServerProcess(tessera_bin, model_path(), ["--ctx-size", "4096", "--max-seqs", "4"])
    try:
        assert gauge(srv, "tessera_kv_window_blocks_total") == 172
        cases = [c for c in json.loads(GOLDEN.read_text())["cases"] if len(c["prompt_tokens"]) > 1000]
        assert len(cases) == 2
        prompts = [c["prompt_tokens"] for c in cases]
        wants = [detokenize(srv, agreed_prefix(c)) for c in cases]
        assert all(wants)
        alone = [complete(srv, p) for p in prompts]
        # Again, together: now the second wave reads the prompts from the cache.
        with concurrent.futures.ThreadPoolExecutor(len(prompts)) as pool:
            together = list(pool.map(lambda p: complete(srv, p), prompts))
        for case, want, a, t in zip(cases, wants, alone, together):
            assert a.startswith(want), f"{case['name']}: {a!r} does not start with llama.cpp's {want!r}"
            assert t.startswith(want), f"{case['name']} again: {t!r} does not start with llama.cpp's {want!r}"
        # Only the prefix cache holds window blocks now, and at most the pool.
        assert 0 < gauge(srv, "tessera_kv_window_blocks_used") <= 172
    finally:
        assert srv.stop() == 0, srv.final_log
