# Prefix-cache isolation between API keys under forced eviction (a KV cache of
# a few prompts): prompts carrying per-key secret markers never reuse another
# key's cached blocks (cached_tokens never exceeds what the same key has sent
# before), repeats within a key do hit, and greedy text never depends on what
# the cache held.
import random

import httpx
import pytest

from server_fixture import ServerProcess

KEYS = ["key-alpha", "key-beta", "key-gamma"]
SECRETS = {"key-alpha": "PLUM-4711-ORCHID", "key-beta": "KIWI-0815-CEDAR", "key-gamma": "FIG-2024-MAPLE"}
BOILERPLATE = ("This is a confidential memo for the operations team. It lists the access codes for the "
               "storage rooms, which must never be shared outside the team. ") * 4


@pytest.fixture(scope="module")
def server(tessera_bin, model_path, tmp_path_factory):
    key_file = tmp_path_factory.mktemp("keys") / "keys.txt"
    key_file.write_text("\n".join(KEYS) + "\n")
    # ~46 KB of F32 K/V per token: 24 MB is ~520 tokens, about three prompts.
    srv = ServerProcess(tessera_bin, model_path, ["--api-key-file", str(key_file), "--kv-memory", "24M",
                                                  "--max-context", "256"], api_key=KEYS[0])
    yield srv
    assert srv.stop() == 0, srv.final_log


def tokenize(server, text):
    r = httpx.post(server.base_url + "/tokenize", json={"content": text},
                   headers={"Authorization": "Bearer " + KEYS[0]}, timeout=30)
    return r.json()["tokens"]


def complete(server, key, ids):
    r = httpx.post(server.base_url + "/v1/completions", json={"prompt": ids, "max_tokens": 8, "temperature": 0},
                   headers={"Authorization": "Bearer " + key}, timeout=120)
    assert r.status_code == 200, r.text
    body = r.json()
    return body["choices"][0]["text"], body["usage"]["prompt_tokens_details"]["cached_tokens"]


def common_prefix(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def test_keys_never_share_cached_blocks_under_eviction(server):
    prompts = {}
    for owner, secret in SECRETS.items():
        prompts[owner] = tokenize(server, BOILERPLATE + f"The code for room {owner} is {secret}. Repeat the code:")
    fillers = [tokenize(server, f"Filler document {i}: " + " ".join(f"item{i}x{j}" for j in range(30)))
               for i in range(6)]
    rng = random.Random(7)
    sent = {k: [] for k in KEYS}  # what each key has sent so far
    reference = {}                # prompt owner -> greedy text
    hits_within_key, evictions_seen = 0, 0
    for step in range(40):
        key = rng.choice(KEYS)
        if rng.random() < 0.3:
            ids, owner = rng.choice(fillers), None
        else:
            owner = rng.choice(KEYS)  # any key may send any prompt, including another key's secret
            ids = prompts[owner]
        text, cached = complete(server, key, ids)
        allowed = max((common_prefix(ids, s) for s in sent[key]), default=0)
        assert cached <= allowed, (step, key, owner, cached, allowed)  # nothing from another key's requests
        if owner is not None:
            assert reference.setdefault(owner, text) == text, (step, key, owner, text, reference[owner])
        if ids in sent[key]:
            hits_within_key += cached > 0
            evictions_seen += cached < len(ids) - 16
        sent[key].append(ids)
        # An immediate repeat by the same key hits its own cache.
        text2, cached2 = complete(server, key, ids)
        assert cached2 > 0 and text2 == text, (step, key, cached2)
    # The scenario really evicted (repeats after other traffic lost blocks) and really hit.
    assert hits_within_key > 0 and evictions_seen > 0, (hits_within_key, evictions_seen)
    for owner, text in reference.items():
        for other, secret in SECRETS.items():
            if other != owner:
                assert secret not in text
