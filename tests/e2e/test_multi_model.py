# Several models in one server (issue 31): the default model twice, under two
# names and KV budgets, routed by `model`; one unloaded and loaded again
# through the admin routes while streams run; bad loads refused while the
# others keep serving; the admin routes' key.
import json
import subprocess
import threading

import httpx
import pytest

from server_fixture import MODEL_ID, ServerProcess

ADMIN = {"Authorization": "Bearer adm"}
SMALL = "small"


@pytest.fixture(scope="module")
def server(tessera_bin, model_path, tmp_path_factory):
    models = tmp_path_factory.mktemp("models") / "models.json"
    models.write_text(json.dumps([{"name": SMALL, "path": model_path, "ctx_size": 512, "aliases": ["tiny"]}]))
    srv = ServerProcess(tessera_bin, model_path, ["--models-file", str(models), "--admin-key", "adm",
                                                  "--max-models", "3"])
    yield srv
    assert srv.stop() == 0, srv.final_log


def complete(srv, model, max_tokens=2):
    return httpx.post(srv.base_url + "/v1/completions", timeout=60,
                      json={"model": model, "prompt": "Hello", "max_tokens": max_tokens, "temperature": 0})


def stream(srv, model, out, started):
    body = {"model": model, "prompt": "Once upon a time", "max_tokens": 64, "temperature": 0, "stream": True,
            "ignore_eos": True}
    events = []
    with httpx.stream("POST", srv.base_url + "/v1/completions", json=body, timeout=120) as r:
        out["status"] = r.status_code
        for line in r.iter_lines():
            if line.startswith("data: "):
                events.append(line[len("data: "):])
                started.set()
    out["events"] = events


def test_lists_every_model_and_alias(server):
    data = httpx.get(server.base_url + "/v1/models").json()["data"]
    assert [m["id"] for m in data] == [MODEL_ID, SMALL, "tiny"]
    assert all(m["max_model_len"] > 0 for m in data)
    assert httpx.get(server.base_url + "/v1/models/tiny").json()["root"] == SMALL
    listing = httpx.get(server.base_url + "/admin/models", headers=ADMIN).json()["data"]
    kv = {m["name"]: m["kv_tokens"] for m in listing}
    assert kv[SMALL] < kv[MODEL_ID] and kv[SMALL] >= 512  # its own ctx_size, not the server's


def test_routes_by_name(server):
    for name in (MODEL_ID, SMALL, "tiny"):
        r = complete(server, name)
        assert r.status_code == 200 and r.json()["model"] == name, r.text
    r = complete(server, "nope")
    assert r.status_code == 404 and r.json()["error"]["code"] == "model_not_found"
    props = httpx.get(server.base_url + "/props", params={"model": "tiny"}).json()
    assert props["model_alias"] == SMALL and props["model_names"] == [SMALL, "tiny"]
    assert httpx.get(server.base_url + "/props").json()["model_alias"] == MODEL_ID
    assert httpx.get(server.base_url + "/props", params={"model": "nope"}).status_code == 404
    tok = httpx.post(server.base_url + "/tokenize", json={"content": "hi", "model": SMALL})
    assert tok.status_code == 200 and tok.json()["tokens"]
    metrics = httpx.get(server.base_url + "/metrics").text
    assert f'tessera_requests_finished_total{{model="{SMALL}"}}' in metrics
    assert f'tessera_requests_finished_total{{model="{MODEL_ID}"}}' in metrics
    one = httpx.get(server.base_url + "/metrics", params={"model": SMALL}).text
    assert MODEL_ID not in one and SMALL in one


def test_unload_and_reload_while_streams_run(server, model_path):
    results, started = [{}, {}], [threading.Event(), threading.Event()]
    threads = [threading.Thread(target=stream, args=(server, name, results[i], started[i]))
               for i, name in enumerate((MODEL_ID, SMALL))]
    for t in threads:
        t.start()
    assert all(e.wait(60) for e in started)  # both streaming: `small`'s own stream must still finish
    r = httpx.delete(server.base_url + "/admin/models/tiny", headers=ADMIN)
    assert r.status_code == 200 and r.json()["name"] == SMALL, r.text
    assert complete(server, SMALL).status_code == 404
    assert complete(server, MODEL_ID).status_code == 200
    r = httpx.post(server.base_url + "/admin/models", headers=ADMIN, timeout=120,
                   json={"name": SMALL, "path": model_path, "ctx_size": 256})
    assert r.status_code == 201 and r.json()["state"] == "ready", r.text
    for t in threads:
        t.join()
    for res in results:
        assert res["status"] == 200
        assert res["events"][-1] == "[DONE]"
        chunks = [json.loads(e) for e in res["events"][:-1]]
        assert "".join(c["choices"][0]["text"] for c in chunks if c["choices"])
        assert chunks[-1]["choices"][0]["finish_reason"] == "length"
    assert complete(server, SMALL).status_code == 200
    assert complete(server, "tiny").status_code == 404  # reloaded without the alias
    assert httpx.get(server.base_url + "/ready").status_code == 200


def test_bad_loads_are_clear_errors_and_others_keep_serving(server, model_path, tmp_path):
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF" + b"\x00" * 60)

    def load(body):
        return httpx.post(server.base_url + "/admin/models", headers=ADMIN, json=body, timeout=60)

    r = load({"name": "junk", "path": str(junk)})
    assert r.status_code == 400 and r.json()["error"]["code"] == "model_load_failed", r.text
    r = load({"name": "missing", "path": str(tmp_path / "none.gguf")})
    assert r.status_code == 400 and "none.gguf" in r.json()["error"]["message"], r.text
    r = load({"name": MODEL_ID, "path": model_path})
    assert r.status_code == 409 and r.json()["error"]["code"] == "model_exists"
    assert load({"name": "x", "path": model_path, "ctx_size": "big"}).status_code == 400
    r = load({"name": "third", "path": model_path, "ctx_size": 64})
    assert r.status_code == 201, r.text
    r = load({"name": "fourth", "path": model_path, "ctx_size": 64})
    assert r.status_code == 400 and r.json()["error"]["code"] == "too_many_models"
    assert httpx.delete(server.base_url + "/admin/models/third", headers=ADMIN).status_code == 200
    assert complete(server, MODEL_ID).status_code == 200
    assert complete(server, SMALL).status_code == 200
    names = [m["name"] for m in httpx.get(server.base_url + "/admin/models", headers=ADMIN).json()["data"]]
    assert "junk" not in names and "missing" not in names


def test_admin_routes_need_the_admin_key(server):
    assert httpx.get(server.base_url + "/admin/models").status_code == 401
    assert httpx.get(server.base_url + "/admin/models", headers={"Authorization": "Bearer no"}).status_code == 401
    assert httpx.delete(server.base_url + "/admin/models/" + SMALL).status_code == 401
    assert complete(server, SMALL).status_code == 200


def test_bad_models_file_refuses_to_start(tessera_bin, model_path, tmp_path):
    bad = tmp_path / "bad-models.json"
    bad.write_text(json.dumps([{"name": "a", "path": model_path, "ctx_size": 1}]))
    r = subprocess.run([tessera_bin, "serve", "-m", model_path, "--port", "0", "--models-file", str(bad)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "bad-models.json" in r.stderr and "ctx_size" in r.stderr, r.stderr
