# Fair scheduling, end to end: a short streaming request sent while a long
# prompt is being prefilled gets its first token within a few engine steps,
# not after the whole prefill, and the long prompt still finishes. Step time
# is measured in the same run (the long prompt's prefill time over its step
# count), so the bound holds on fast and slow machines and under sanitizers. Plain HTTP and
# hand-parsed SSE only: status codes and chunks, nothing server-internal.
import json
import math
import os
import random
import threading
import time

import httpx
import pytest

from server_fixture import ServerProcess

# Sanitizer builds (ASAN_OPTIONS, or a TESSERA_BIN under build-*san*) run
# 5-10x slower: a smaller step budget and prompt keep about as many steps
# (10-12) in well under a minute.
SANITIZED = bool(os.environ.get("ASAN_OPTIONS") or os.environ.get("TESSERA_SANITIZED") or
                 "san" in os.path.basename(os.path.dirname(os.environ.get("TESSERA_BIN", ""))))
BUDGET = 64 if SANITIZED else 512        # --max-batch-tokens
LONG = 640 if SANITIZED else 6000        # long prompt tokens
STEPS = math.ceil(LONG / BUDGET)         # steps its prefill takes
SHORT_PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def server(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path, ["--ctx-size", "8192", "--max-batch-tokens", str(BUDGET)])
    yield srv
    assert srv.stop() == 0, srv.final_log


def token_prompt(n, seed):
    # Token ids, so the length is exact; a new seed shares no prefix-cache block.
    rng = random.Random(seed)
    return [rng.randrange(1000, 40000) for _ in range(n)]


def first_token_seconds(base_url, prompt, result=None):
    """Streams a 1-token completion; returns seconds from send to the first
    chunk that carries a choice's text or finish_reason (and stores it in
    result["ttft"], with the arrival time in result["at"])."""
    body = {"prompt": prompt, "max_tokens": 1, "temperature": 0, "stream": True}
    t0 = time.monotonic()
    ttft = None
    with httpx.stream("POST", base_url + "/v1/completions", json=body, timeout=600) as r:
        assert r.status_code == 200, r.read()
        events = []
        for line in r.iter_lines():
            if not line.startswith("data: "):
                continue
            data = line[len("data: "):]
            events.append(data)
            if data == "[DONE]" or ttft is not None:
                continue
            choices = json.loads(data).get("choices") or []
            if any(c.get("text") or c.get("finish_reason") for c in choices):
                ttft = time.monotonic() - t0
                if result is not None:
                    result["at"] = time.monotonic()
    assert events and events[-1] == "[DONE]", events[-3:]
    assert ttft is not None, events
    if result is not None:
        result["ttft"] = ttft
    return ttft


def test_short_request_is_not_starved_by_a_long_prefill(server):
    url = server.base_url
    short_idle = min(first_token_seconds(url, SHORT_PROMPT) for _ in range(2))
    # One full step at a shallow depth: a lower bound of the long prompt's steps.
    first_step = first_token_seconds(url, token_prompt(BUDGET, 1))

    # The long prompt, and a short request once it is well into its prefill.
    long_result = {}
    t = threading.Thread(target=first_token_seconds, args=(url, token_prompt(LONG, 2), long_result))
    t.start()
    time.sleep(2 * first_step)
    short_result = {}
    short_busy = first_token_seconds(url, SHORT_PROMPT, short_result)
    t.join()

    assert "ttft" in long_result, "the long request failed"
    step = long_result["ttft"] / STEPS  # its mean step time (the short one's tokens included)
    report = (f"steps={STEPS} step={step:.3f}s first_step={first_step:.3f}s long={long_result['ttft']:.2f}s "
              f"short_idle={short_idle:.3f}s short_busy={short_busy:.3f}s")
    print(report)
    # It really ran during the prefill: the long prompt's token came later.
    assert short_result["at"] < long_result["at"], report
    # At most the step in flight when it arrived plus the one it runs in,
    # with one step of slack; FCFS makes it wait for the rest of the
    # prefill (about STEPS - 2 steps).
    assert short_busy <= short_idle + 3 * step, report
