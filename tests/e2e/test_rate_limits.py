# Per-key limits and usage (issue 31): a key over its tokens per minute gets a
# 429 with Retry-After while another key is served; the concurrent-request and
# requests-per-minute caps; usage counters in /metrics and /admin/usage equal
# the sums of the responses' usage fields; SIGHUP reloads the key file (a key
# added, one removed) while that key's stream runs on, and a bad file keeps
# the old keys; keys of one group share cached prompts. One server for the
# module, tiny max_tokens.
import json
import math
import re
import signal
import time

import httpx
import pytest

from server_fixture import MODEL_ID, ServerProcess, sse_events

KEYS = """# test keys
sk-alice name=alice tpm=40
sk-bob name=bob
sk-carol name=carol streams=1
sk-dave name=dave rpm=2
sk-gina name=gina
sk-frank name=frank
sk-team1 name=team1 group=team
sk-team2 name=team2 group=team
"""
ADMIN = "adm-secret"


@pytest.fixture(scope="module")
def key_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("keys") / "keys.txt"
    path.write_text(KEYS)
    return path


@pytest.fixture(scope="module")
def server(tessera_bin, model_path, key_file):
    srv = ServerProcess(tessera_bin, model_path, ["--api-key-file", str(key_file), "--admin-key", ADMIN],
                        api_key="sk-bob")
    yield srv
    assert srv.stop() == 0, srv.final_log


def auth(key):
    return {"Authorization": "Bearer " + key}


def complete(server, key, max_tokens, prompt="Hello", **extra):
    body = {"model": MODEL_ID, "prompt": prompt, "max_tokens": max_tokens, "ignore_eos": True,
            "temperature": 0, **extra}
    return httpx.post(server.base_url + "/v1/completions", json=body, headers=auth(key), timeout=120)


def admin_usage(server):
    r = httpx.get(server.base_url + "/admin/usage", headers=auth(ADMIN), timeout=30)
    assert r.status_code == 200, r.text
    return {row["name"]: row for row in r.json()["data"]}


def key_metrics(server, name):
    text = httpx.get(server.base_url + "/metrics", headers=auth("sk-bob"), timeout=30).text
    assert not re.search(r"sk-(alice|bob|carol|dave|gina|frank|team)", text)  # names only, never keys
    out = {}
    for m in re.finditer(r'^tessera_key_(\w+)\{key="' + re.escape(name) + r'"\} (\d+)$', text, re.M):
        out[m.group(1)] = int(m.group(2))
    return out


def reload_keys(server, key_file, text, expect):
    n = server.log_text().count("SIGHUP:")
    key_file.write_text(text)
    server.proc.send_signal(signal.SIGHUP)
    deadline = time.time() + 10
    while server.log_text().count("SIGHUP:") == n and time.time() < deadline:
        time.sleep(0.05)
    last = [line for line in server.log_text().splitlines() if "SIGHUP:" in line][-1]
    assert expect in last, last
    return last


def test_tokens_per_minute_429_with_retry_after_and_other_key_unaffected(server):
    sent = time.monotonic()
    first = complete(server, "sk-alice", 30)  # reserves prompt + 30 of 40, uses all of it (ignore_eos)
    assert first.status_code == 200, first.text
    used = first.json()["usage"]["total_tokens"]
    prompt = first.json()["usage"]["prompt_tokens"]
    refused = complete(server, "sk-alice", 20)
    elapsed = time.monotonic() - sent
    assert refused.status_code == 429, refused.text
    err = refused.json()["error"]
    assert err["type"] == "rate_limit_error" and err["code"] == "rate_limit_exceeded"
    assert "tokens per minute" in err["message"] and "alice" in err["message"]
    # 40 a minute refill: 1.5 s a token. Missing at the refusal: (prompt + 20) - (40 - used),
    # less what refilled since the first request was admitted (Retry-After falls a second a second).
    if_no_refill = math.ceil((prompt + 20 - (40 - used)) * 1.5)
    retry = int(refused.headers["Retry-After"])
    assert if_no_refill - math.ceil(elapsed) - 1 <= retry <= if_no_refill, (retry, if_no_refill, elapsed)
    assert complete(server, "sk-bob", 20).status_code == 200  # another key is unaffected
    too_large = complete(server, "sk-alice", 60)  # can never fit 40 a minute
    assert too_large.status_code == 400 and "Retry-After" not in too_large.headers
    assert too_large.json()["error"]["code"] == "request_too_large"
    assert admin_usage(server)["alice"]["rate_limited"] == 1
    assert key_metrics(server, "alice")["rate_limited_total"] == 1


def test_concurrent_request_cap(server):
    body = {"model": MODEL_ID, "prompt": "Once", "max_tokens": 120, "ignore_eos": True, "stream": True}
    with httpx.stream("POST", server.base_url + "/v1/completions", json=body, headers=auth("sk-carol"),
                      timeout=120) as stream:
        lines = stream.iter_lines()
        assert next(line for line in lines if line.startswith("data: "))
        second = complete(server, "sk-carol", 1)
        assert second.status_code == 429, second.text
        assert "1 concurrent requests" in second.json()["error"]["message"]
        assert second.headers["Retry-After"] == "1"
        assert complete(server, "sk-bob", 1).status_code == 200
        assert admin_usage(server)["carol"]["active_requests"] == 1
        assert [line for line in lines if line.startswith("data: ")][-1] == "data: [DONE]"
    assert complete(server, "sk-carol", 1).status_code == 200  # the slot is free again


def test_requests_per_minute(server):
    assert complete(server, "sk-dave", 1).status_code == 200
    assert complete(server, "sk-dave", 1).status_code == 200
    third = complete(server, "sk-dave", 1)
    assert third.status_code == 429
    assert "2 requests per minute" in third.json()["error"]["message"]
    assert 25 <= int(third.headers["Retry-After"]) <= 30  # one request every 30 s


def test_usage_counters_are_exact(server):
    chat = {"model": MODEL_ID, "max_tokens": 3, "temperature": 0,
            "messages": [{"role": "system", "content": "You are a terse assistant. " * 4},
                         {"role": "user", "content": "Name a colour."}]}
    usages = []
    for _ in range(2):  # the second reads its prompt from the prefix cache
        r = httpx.post(server.base_url + "/v1/chat/completions", json=chat, headers=auth("sk-gina"), timeout=120)
        assert r.status_code == 200, r.text
        usages.append(r.json()["usage"])
    assert usages[1]["prompt_tokens_details"]["cached_tokens"] > 0
    body = {"model": MODEL_ID, "prompt": "Hi", "max_tokens": 4, "stream": True,
            "stream_options": {"include_usage": True}}
    with httpx.stream("POST", server.base_url + "/v1/completions", json=body, headers=auth("sk-gina"),
                      timeout=120) as s:
        usages.append(json.loads(sse_events(s)[-2])["usage"])
    emb = httpx.post(server.base_url + "/v1/embeddings", json={"model": MODEL_ID, "input": ["a b c", "d"]},
                     headers=auth("sk-gina"), timeout=120)
    assert emb.status_code == 200, emb.text
    embed_prompt = emb.json()["usage"]["prompt_tokens"]
    want = {"requests": 4,
            "prompt_tokens": sum(u["prompt_tokens"] for u in usages) + embed_prompt,
            "cached_tokens": sum(u["prompt_tokens_details"]["cached_tokens"] for u in usages),
            "completion_tokens": sum(u["completion_tokens"] for u in usages),
            "rate_limited": 0}
    row = admin_usage(server)["gina"]
    assert {k: row[k] for k in want} == want
    assert row["active_requests"] == 0 and row["limits"] == {"rpm": None, "tpm": None, "streams": None}
    m = key_metrics(server, "gina")
    assert {k: m[k + "_total"] for k in want} == want
    assert httpx.get(server.base_url + "/admin/usage", headers=auth("sk-gina")).status_code == 401


def test_keys_of_a_group_share_the_prefix_cache(server):
    chat = {"model": MODEL_ID, "max_tokens": 1, "temperature": 0,
            "messages": [{"role": "system", "content": "Team handbook, section 7, in full. " * 4},
                         {"role": "user", "content": "Summarise."}]}

    def cached(key):
        r = httpx.post(server.base_url + "/v1/chat/completions", json=chat, headers=auth(key), timeout=120)
        assert r.status_code == 200, r.text
        return r.json()["usage"]["prompt_tokens_details"]["cached_tokens"]

    assert cached("sk-team1") == 0
    assert cached("sk-team2") > 0  # the same group: team1's blocks
    assert cached("sk-bob") == 0   # another domain never sees them


def test_sighup_reload_adds_and_removes_keys_while_a_stream_runs(server, key_file):
    before = admin_usage(server)["alice"]
    body = {"model": MODEL_ID, "prompt": "Once", "max_tokens": 80, "ignore_eos": True, "stream": True,
            "stream_options": {"include_usage": True}}
    with httpx.stream("POST", server.base_url + "/v1/completions", json=body, headers=auth("sk-frank"),
                      timeout=120) as stream:
        lines = stream.iter_lines()
        assert next(line for line in lines if line.startswith("data: "))
        new_keys = KEYS.replace("sk-frank name=frank\n", "sk-erin name=erin\n")
        reload_keys(server, key_file, new_keys, "reloaded 8 API keys")
        assert complete(server, "sk-erin", 1).status_code == 200
        assert complete(server, "sk-frank", 1).status_code == 401
        reload_keys(server, key_file, new_keys + "sk-bad rpm=abc\n", "keeping the current API keys")
        assert "line 10: field 2 rpm" in server.log_text() and "sk-bad" not in server.log_text()
        assert complete(server, "sk-erin", 1).status_code == 200
        data = [line[len("data: "):] for line in lines if line.startswith("data: ")]
    assert data[-1] == "[DONE]"
    assert json.loads(data[-2])["usage"]["completion_tokens"] == 80  # the stream ran to the end
    after = admin_usage(server)
    assert "frank" not in after and "erin" in after
    assert after["alice"] == before  # counters (and buckets) kept by name
    reload_keys(server, key_file, KEYS, "reloaded 8 API keys")
