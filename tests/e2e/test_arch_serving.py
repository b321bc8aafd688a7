# The new architectures through the serving engine: greedy completions of a
# tiny gemma3 / qwen3 model (tools/make_tiny_model.py) match the independent
# NumPy reference's greedy tokens, whether requests run one at a time or
# together in ragged batches (paged KV, decode tokens batched with prefills;
# gemma3's local layers see only the last 5 positions).
import concurrent.futures
import pathlib
import re
import subprocess
import sys

import httpx
import numpy as np
import pytest
from server_fixture import MODEL_ID, ServerProcess

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import reference_forward as ref  # noqa: E402

N_VOCAB = 300
EOS = N_VOCAB - 1  # make_tiny_model's <|endoftext|>
MAX_TOKENS = 8
PROMPTS = [[(13 * i + 7 * j + 1) % EOS for j in range(n)] for i, n in enumerate([3, 9, 17, 30, 6, 24])]


def reference_greedy(model, prompt):
    m = ref.Model(model)
    ids = list(prompt)
    for _ in range(MAX_TOKENS):
        nxt = int(ref.forward(m, ids)[-1].argmax())
        if nxt == EOS:
            break
        ids.append(nxt)
    return ids[len(prompt):]


# Untied: with a tied random embedding, greedy decoding just repeats the last
# token whatever the attention does, so it would not notice a broken window.
@pytest.fixture(scope="module", params=["gemma3", "qwen3"])
def served(request, tmp_path_factory, tessera_bin):
    path = tmp_path_factory.mktemp(request.param) / f"{request.param}.gguf"
    subprocess.run([sys.executable, str(ROOT / "tools" / "make_tiny_model.py"), "--out", str(path),
                    "--variant", request.param, "--wtype", "F32"], check=True)
    srv = ServerProcess(tessera_bin, str(path), ["--ctx-size", "512"])
    yield srv, str(path)
    assert srv.stop() == 0, srv.final_log


def same_text(text):
    """Random tiny-vocab tokens split UTF-8 sequences: a completion's
    streaming decoder and /detokenize may replace a broken sequence with a
    different number of U+FFFD, so runs of them compare as one."""
    return re.sub("\ufffd+", "\ufffd", text)


def complete(srv, prompt):
    r = httpx.post(srv.base_url + "/v1/completions", timeout=120,
                   json={"model": MODEL_ID, "prompt": prompt, "max_tokens": MAX_TOKENS, "temperature": 0})
    assert r.status_code == 200, r.text
    return same_text(r.json()["choices"][0]["text"])


def test_greedy_matches_reference_alone_and_batched(served):
    srv, model = served
    want = []
    for prompt in PROMPTS:
        ids = reference_greedy(model, prompt)
        r = httpx.post(srv.base_url + "/detokenize", json={"tokens": ids}, timeout=30)
        assert r.status_code == 200, r.text
        want.append(same_text(r.json()["content"]))
    assert len(set(want)) > 1  # different prompts, different continuations
    alone = [complete(srv, p) for p in PROMPTS]
    with concurrent.futures.ThreadPoolExecutor(len(PROMPTS)) as pool:
        together = list(pool.map(lambda p: complete(srv, p), PROMPTS))
    assert alone == want
    assert together == want
