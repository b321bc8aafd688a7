# POST /v1/embeddings through the official `openai` client: float and base64
# vectors (the same bits), a batch of 64 inputs gathered in order (identical
# texts give cosine 1, and the same vectors as one input alone), token-id
# inputs, the 400s and 404 of a bad request, embeddings and chat at once;
# then the vectors against two references: llama.cpp's (tests/golden/
# embeddings/, made by tools/gen_embedding_golden.py) and the NumPy forward
# pass (tools/reference_forward.py) on a tiny random model with mean pooling.
import base64
import json
import pathlib
import subprocess
import sys
import threading

import httpx
import numpy as np
import openai
import pytest

from server_fixture import MODEL_ID, ServerProcess

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "embeddings"
sys.path.insert(0, str(ROOT / "tools"))
import reference_forward as ref  # noqa: E402

TEXTS = ["The cat sat on the mat.", "A stock market crash wiped out savings.", "Cats like to sit on mats."]


@pytest.fixture(scope="module")
def server(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path)
    yield srv
    assert srv.stop() == 0, srv.final_log


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.base_url + "/v1", api_key="x", max_retries=0, timeout=300)


def n_embd(server):
    return httpx.get(server.base_url + "/props", timeout=30).json()["n_embd"]


def cosine(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def post(server, body):
    return httpx.post(server.base_url + "/v1/embeddings", json=body, timeout=300)


def test_float_and_base64_give_the_same_unit_vector(client, server):
    f = client.embeddings.create(model=MODEL_ID, input=TEXTS[0], encoding_format="float")
    assert f.object == "list" and f.model == MODEL_ID and len(f.data) == 1
    vec = np.asarray(f.data[0].embedding, dtype=np.float32)
    assert vec.shape == (n_embd(server),)
    assert abs(np.linalg.norm(vec.astype(np.float64)) - 1.0) < 1e-5
    assert f.usage.prompt_tokens == f.usage.total_tokens > 0
    raw = post(server, {"model": MODEL_ID, "input": TEXTS[0], "encoding_format": "base64"}).json()
    b64 = np.frombuffer(base64.b64decode(raw["data"][0]["embedding"]), dtype="<f4")
    np.testing.assert_array_equal(b64, vec)
    # The client's own base64 path (it asks for base64 and decodes it when the
    # caller does not name a format).
    c = client.embeddings.create(model=MODEL_ID, input=TEXTS[0])
    np.testing.assert_array_equal(np.asarray(c.data[0].embedding, dtype=np.float32), vec)


def test_batch_of_64_in_order_and_equal_to_single_inputs(client):
    texts = [f"Sentence number {i} is about {TEXTS[i % 3]}" for i in range(60)] + [TEXTS[0]] * 4
    r = client.embeddings.create(model=MODEL_ID, input=texts, encoding_format="float")
    assert [d.index for d in r.data] == list(range(64))
    for d in r.data[61:]:
        assert cosine(d.embedding, r.data[60].embedding) == pytest.approx(1.0, abs=1e-6)
    for i in (0, 17, 60):
        alone = client.embeddings.create(model=MODEL_ID, input=texts[i], encoding_format="float").data[0].embedding
        assert cosine(alone, r.data[i].embedding) > 0.9999, i
    assert len({tuple(d.embedding[:8]) for d in r.data[:60]}) == 60  # different texts, different vectors


def test_token_id_inputs(server, client):
    ids = httpx.post(server.base_url + "/tokenize", json={"content": TEXTS[1]}, timeout=30).json()["tokens"]
    one = client.embeddings.create(model=MODEL_ID, input=ids, encoding_format="float")
    two = client.embeddings.create(model=MODEL_ID, input=[ids, ids[:3]], encoding_format="float")
    assert len(one.data) == 1 and len(two.data) == 2
    assert one.usage.prompt_tokens == len(ids)
    assert two.usage.prompt_tokens == len(ids) + 3
    assert cosine(one.data[0].embedding, two.data[0].embedding) == pytest.approx(1.0, abs=1e-6)
    assert cosine(two.data[1].embedding, two.data[0].embedding) < 0.9999


def test_dimensions_equal_to_the_model_size_is_accepted(server):
    r = post(server, {"model": MODEL_ID, "input": "x", "dimensions": n_embd(server)})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("body, param", [
    ({"input": ""}, "input"),
    ({"input": []}, "input"),
    ({"input": [[]]}, "input"),
    ({"input": ["a", 1]}, "input"),
    ({"input": [1, "a"]}, "input"),
    ({"input": [10 ** 9]}, "input"),
    ({"input": [-1]}, "input"),
    ({"input": 5}, "input"),
    ({}, "input"),
    ({"input": "x", "encoding_format": "int8"}, "encoding_format"),
    ({"input": "x", "dimensions": 8}, "dimensions"),
    ({"input": "x", "dimensions": 0}, "dimensions"),
    ({"input": ["a"] * 2049}, "input"),
])
def test_bad_requests_are_400_naming_the_field(server, body, param):
    r = post(server, {"model": MODEL_ID, **body})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == param


def test_unknown_model_is_404(server):
    r = post(server, {"model": "gpt-4o", "input": "x"})
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "model_not_found"


def test_embeddings_and_chat_at_the_same_time(client):
    results, errors = {}, []

    def chat():
        try:
            r = client.chat.completions.create(model=MODEL_ID, max_tokens=24, temperature=0,
                                               messages=[{"role": "user", "content": "Count to ten."}])
            results["chat"] = r.choices[0].message.content
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    def embed(k):
        try:
            r = client.embeddings.create(model=MODEL_ID, input=[f"{t} ({k})" for t in TEXTS] * 4,
                                         encoding_format="float")
            results[k] = len(r.data)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=chat)] + [threading.Thread(target=embed, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors
    assert results["chat"]
    assert [results[k] for k in range(3)] == [12, 12, 12]


def golden_cases(pooling):
    path = GOLDEN / f"smollm2_q4_1_{pooling}.json"
    if not path.exists():
        pytest.skip(f"{path} not generated (tools/gen_embedding_golden.py needs llama-cpp-python)")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("pooling", ["last", "mean"])
def test_vectors_match_llama_cpp(tessera_bin, model_path, pooling):
    golden = golden_cases(pooling)
    assert pathlib.Path(model_path).name == golden["model"], "the golden vectors are for another model"
    srv = ServerProcess(tessera_bin, model_path, extra_args=("--pooling", pooling))
    try:
        ids = [c["tokens"] for c in golden["cases"]]
        got = post(srv, {"model": MODEL_ID, "input": ids}).json()["data"]
        texts = post(srv, {"model": MODEL_ID, "input": [c["text"] for c in golden["cases"]]}).json()["data"]
    finally:
        assert srv.stop() == 0, srv.final_log
    for case, g, t in zip(golden["cases"], got, texts):
        assert cosine(g["embedding"], case["embedding"]) >= 0.99, case["text"]
        # The text path tokenizes as llama.cpp does, so it gives the same vector.
        assert cosine(t["embedding"], g["embedding"]) == pytest.approx(1.0, abs=1e-6), case["text"]


@pytest.mark.parametrize("pooling", ["mean", "cls", "last"])
def test_vectors_match_the_numpy_reference_on_a_tiny_model(tessera_bin, tmp_path, pooling):
    path = tmp_path / "tiny.gguf"
    subprocess.run([sys.executable, str(ROOT / "tools" / "make_tiny_model.py"), "--out", str(path),
                    "--variant", "gqa", "--wtype", "F32"], check=True)
    inputs = [[5, 17, 99, 3, 250, 42, 7, 8, 9, 10, 11], [200, 1], [64]]
    model = ref.Model(str(path), "none")
    srv = ServerProcess(tessera_bin, str(path), extra_args=("--pooling", pooling))
    try:
        got = post(srv, {"model": MODEL_ID, "input": inputs}).json()["data"]
    finally:
        assert srv.stop() == 0, srv.final_log
    for ids, g in zip(inputs, got):
        h = ref.hidden_states(model, ids)
        want = {"mean": h.mean(axis=0), "cls": h[0], "last": h[-1]}[pooling]
        assert cosine(g["embedding"], want) >= 0.999, ids
