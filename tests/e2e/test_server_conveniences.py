# What llama-server and vLLM users expect around the API: model names and
# 404s, /v1/models/{id}, /props, CORS for browser pages, an access log line
# per request, --chat-template, and the startup summary.
import json
import re

import httpx
import openai
import pytest

from server_fixture import MODEL_ID, ServerProcess

CHAT = [{"role": "user", "content": "Say hi."}]
ORIGIN = "http://chat.example"


@pytest.fixture(scope="module")
def server(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path, ["--served-model-name", MODEL_ID, "--alias", "second-name",
                                                  "--cors-origin", ORIGIN, "--api-key", "k1"], api_key="k1")
    yield srv
    assert srv.stop() == 0, srv.final_log


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.base_url + "/v1", api_key="k1", max_retries=0, timeout=120)


AUTH = {"Authorization": "Bearer k1"}


def test_unknown_model_is_404_model_not_found(client):
    for call in (lambda: client.chat.completions.create(model="gpt-4o", messages=CHAT, max_tokens=2),
                 lambda: client.completions.create(model="gpt-4o", prompt="Hi", max_tokens=2)):
        with pytest.raises(openai.NotFoundError) as e:
            call()
        assert e.value.body["code"] == "model_not_found"
        assert e.value.body["param"] == "model"
    # Every served name works, and the reply names the model asked for.
    for name in (MODEL_ID, "second-name"):
        assert client.chat.completions.create(model=name, messages=CHAT, max_tokens=2).model == name


def test_models_list_and_lookup(server, client):
    assert [m.id for m in client.models.list().data] == [MODEL_ID, "second-name"]
    assert client.models.retrieve("second-name").id == "second-name"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("gpt-4o")
    r = httpx.get(server.base_url + "/v1/models/org/with-slash", headers=AUTH)
    assert r.status_code == 404 and r.json()["error"]["code"] == "model_not_found"


def test_props_describe_the_model(server):
    assert httpx.get(server.base_url + "/props").status_code == 401  # like every route but the probes
    p = httpx.get(server.base_url + "/props", headers=AUTH).json()
    assert p["model_alias"] == MODEL_ID and p["model_names"] == [MODEL_ID, "second-name"]
    assert p["architecture"] == "llama"
    assert p["n_ctx"] > 0 and p["total_slots"] > 0
    assert "im_start" in p["chat_template"] and p["eos_token"]


def test_probes_need_no_key(server):
    assert httpx.get(server.base_url + "/health").status_code == 200
    assert httpx.get(server.base_url + "/ready").status_code == 200


def test_cors_preflight_and_allow_origin(server):
    url = server.base_url + "/v1/chat/completions"
    pre = httpx.options(url, headers={"Origin": ORIGIN, "Access-Control-Request-Method": "POST",
                                      "Access-Control-Request-Headers": "authorization, content-type"})
    assert pre.status_code == 204  # no key: browsers never send one with a preflight
    assert pre.headers["access-control-allow-origin"] == ORIGIN
    assert "POST" in pre.headers["access-control-allow-methods"]
    assert pre.headers["access-control-allow-headers"] == "authorization, content-type"
    assert pre.headers["vary"] == "Origin"
    other = httpx.options(url, headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
    assert other.status_code == 403 and "access-control-allow-origin" not in other.headers
    # The real requests: allowed origin gets the header on success and on errors
    # (so the page can read them); other origins never do.
    ok = httpx.post(url, json={"messages": CHAT, "max_tokens": 2}, headers={**AUTH, "Origin": ORIGIN}, timeout=120)
    assert ok.status_code == 200 and ok.headers["access-control-allow-origin"] == ORIGIN
    denied = httpx.post(url, json={"messages": CHAT}, headers={"Origin": ORIGIN})
    assert denied.status_code == 401 and denied.headers["access-control-allow-origin"] == ORIGIN
    foreign = httpx.post(url, json={"messages": CHAT, "max_tokens": 2}, headers={**AUTH, "Origin": "http://evil.example"},
                         timeout=120)
    assert foreign.status_code == 200 and "access-control-allow-origin" not in foreign.headers


def test_no_cors_without_the_flag(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path, ["--no-access-log"])
    try:
        r = httpx.options(srv.base_url + "/v1/models", headers={"Origin": ORIGIN, "Access-Control-Request-Method": "GET"})
        assert r.status_code == 405 and "access-control-allow-origin" not in r.headers
        assert httpx.get(srv.base_url + "/v1/models", headers={"Origin": ORIGIN}).headers.get(
            "access-control-allow-origin") is None
    finally:
        assert srv.stop() == 0
    assert "GET /v1/models" not in srv.final_log  # --no-access-log


def test_access_log_text_line(server, client):
    r = client.chat.completions.create(model=MODEL_ID, messages=CHAT, max_tokens=5, temperature=0,
                                       extra_body={"ignore_eos": True})
    lines = [l for l in server.log_text().splitlines() if " POST /v1/chat/completions 200 " in l]
    m = re.search(r"prompt=(\d+) completion=(\d+) ttft_ms=([\d.]+) total_ms=([\d.]+)$", lines[-1])
    assert m, lines[-1]
    assert int(m.group(1)) == r.usage.prompt_tokens and int(m.group(2)) == r.usage.completion_tokens == 5
    assert 0 < float(m.group(3)) <= float(m.group(4))
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ 127\.0\.0\.1 ", lines[-1])


def test_access_log_json_lines(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path, ["--log-format", "json"])
    try:
        c = openai.OpenAI(base_url=srv.base_url + "/v1", api_key="x", max_retries=0, timeout=120)
        stream = c.chat.completions.create(model=MODEL_ID, messages=CHAT, max_tokens=4, stream=True, temperature=0,
                                           extra_body={"ignore_eos": True}, stream_options={"include_usage": True})
        usage = [ch.usage for ch in stream if ch.usage][-1]
        httpx.get(srv.base_url + "/nope")
    finally:
        assert srv.stop() == 0
    records = [json.loads(l) for l in srv.final_log.splitlines() if l.startswith("{")]
    gen = [r for r in records if r["path"] == "/v1/chat/completions"][-1]
    assert gen["method"] == "POST" and gen["status"] == 200 and gen["completed"] is True
    assert gen["prompt_tokens"] == usage.prompt_tokens and gen["completion_tokens"] == 4
    assert 0 < gen["ttft_ms"] <= gen["total_ms"]
    missing = [r for r in records if r["path"] == "/nope"][-1]
    assert missing["status"] == 404 and "prompt_tokens" not in missing


def test_chat_template_from_file_and_by_name(tessera_bin, model_path, tmp_path):
    tmpl = tmp_path / "t.jinja"
    tmpl.write_text("{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}[assistant]")
    srv = ServerProcess(tessera_bin, model_path, ["--chat-template", str(tmpl)])
    try:
        c = openai.OpenAI(base_url=srv.base_url + "/v1", api_key="x", max_retries=0, timeout=120)
        r = c.chat.completions.create(model=MODEL_ID, messages=CHAT, max_tokens=1)
        ids = httpx.post(srv.base_url + "/tokenize", json={"content": "[user] Say hi.\n[assistant]"}).json()["tokens"]
        assert r.usage.prompt_tokens == len(ids)
    finally:
        assert srv.stop() == 0
    srv = ServerProcess(tessera_bin, model_path, ["--chat-template", "llama3"])
    try:
        props = httpx.get(srv.base_url + "/props").json()
        assert "<|start_header_id|>" in props["chat_template"]
    finally:
        assert srv.stop() == 0


def test_bad_chat_template_fails_at_startup(tessera_bin, model_path, tmp_path):
    bad = tmp_path / "bad.jinja"
    bad.write_text("{% for m in messages %}")
    for value, needle in ((str(bad), "bad.jinja"), ("no-such-name", "built-in")):
        with pytest.raises(RuntimeError) as e:
            ServerProcess(tessera_bin, model_path, ["--chat-template", value], ready_timeout=60)
        assert needle in str(e.value)


def test_startup_summary(server):
    log = server.log_text()
    assert re.search(r"model .*\(llama, \d+ layers, served as 'test-model'\)", log)
    assert re.search(r"context \d+ tokens per request; KV cache \d+ tokens \(\d+ blocks of \d+, K f16, V f16\)", log)
    assert re.search(r"kernels (avx2|avx512vnni|avx512amx|scalar), \d+ compute threads", log)
