# Prompt caching with a TTL (cache_control): a marked system prompt stays in a
# small KV cache through traffic that evicts every unmarked prefix, usage says
# what the request wrote and later ones read, the pin is visible in /metrics,
# and it lets go once its TTL passes. Malformed markers are 400s.
import time

import httpx
import pytest

from server_fixture import MODEL_ID, ServerProcess, metric

SYSTEM = ("You are the support assistant of a hardware store. Answer briefly and politely, name the aisle "
          "where an item is kept, and never invent prices. ") * 3


@pytest.fixture(scope="module")
def server(tessera_bin, model_path):
    # 12 MB of F16 K/V is 34 blocks (544 tokens), so four fillers evict
    # every unpinned prefix; pins may hold half of it.
    srv = ServerProcess(tessera_bin, model_path, ["--kv-memory", "12M", "--max-context", "256"])
    yield srv
    assert srv.stop() == 0, srv.final_log


def chat(server, question, marker=None, system_text=SYSTEM):
    system = {"role": "system", "content": system_text}
    if marker is not None:
        system["cache_control"] = marker
    body = {"model": MODEL_ID, "max_tokens": 2, "temperature": 0,
            "messages": [system, {"role": "user", "content": question}]}
    r = httpx.post(server.base_url + "/v1/chat/completions", json=body, timeout=120)
    assert r.status_code == 200, r.text
    return r.json()["usage"]


def flood(server):
    for i in range(4):
        r = httpx.post(server.base_url + "/v1/completions", timeout=120, json={
            "model": MODEL_ID, "max_tokens": 1,
            "prompt": f"Filler {i}: " + " ".join(f"w{i}x{j}" for j in range(40))})
        assert r.status_code == 200, r.text


def metrics(server):
    return httpx.get(server.base_url + "/metrics", timeout=10).text


def test_marked_system_prompt_survives_eviction_and_a_short_ttl_expires(server):
    # Unmarked: the filler traffic evicts the system prompt.
    chat(server, "Where are the hammers?")
    flood(server)
    assert chat(server, "Where is the glue?")["prompt_tokens_details"]["cached_tokens"] == 0

    flood(server)
    # A TTL far longer than the test (sanitized builds are slow), so only
    # eviction could take it.
    first = chat(server, "Where are the nails?", {"type": "ephemeral", "ttl": "10m"})
    written = first["prompt_tokens_details"]["cache_write_tokens"]
    assert written > 0 and written % 16 == 0 and first["prompt_tokens_details"]["cached_tokens"] == 0, first
    assert metric(metrics(server), "tessera_kv_pins") == 1
    flood(server)
    again = chat(server, "Where is the paint?", {"type": "ephemeral", "ttl": "10m"})
    assert again["prompt_tokens_details"]["cached_tokens"] >= written, (first, again)
    assert again["prompt_tokens_details"]["cache_write_tokens"] == 0  # read, not written
    assert metric(metrics(server), "tessera_kv_pins") == 1            # extended, not stacked

    # Another prompt kept for one second lets go once that second has passed.
    pinned_at = time.monotonic()
    chat(server, "Hi", {"type": "ephemeral", "ttl": 1}, system_text="Answer in French. " * 8)
    assert metric(metrics(server), "tessera_kv_pins") in (1, 2)
    deadline = pinned_at + 30
    while metric(metrics(server), "tessera_kv_pins") != 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert metric(metrics(server), "tessera_kv_pins") == 1
    assert time.monotonic() - pinned_at >= 1.0


@pytest.mark.parametrize("marker", [{"type": "persistent"}, {"type": "ephemeral", "ttl": "2d"},
                                    {"type": "ephemeral", "ttl": 999999}, "ephemeral"])
def test_malformed_markers_are_400s(server, marker):
    body = {"model": MODEL_ID, "max_tokens": 1,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": marker}]}]}
    r = httpx.post(server.base_url + "/v1/chat/completions", json=body, timeout=30)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == "messages[0].cache_control"
