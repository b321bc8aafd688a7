# The model file truncated while `tessera serve` maps it: the next forward
# pass reads pages the file lost, which is SIGBUS without core/sigbus_guard.
# The server must stay up, fail those requests (and every later one) with an
# error that says the file changed on disk, report itself not ready, and keep
# answering /health. Only status codes and JSON bodies are relied on.
import json
import os
import shutil
import time

import httpx

from server_fixture import ServerProcess, sse_events

PHRASE = "changed on disk"
COMPLETION = {"prompt": "The capital of France is", "max_tokens": 8, "temperature": 0, "ignore_eos": True}


def error_message(response):
    assert 400 <= response.status_code < 600, (response.status_code, response.text)
    body = response.json()
    assert isinstance(body.get("error"), dict), body
    return body["error"]["message"]


def streamed_error(client, base_url):
    """The error of a streamed request: refused up front, or an error event."""
    with client.stream("POST", base_url + "/v1/completions", json={**COMPLETION, "stream": True}) as r:
        if r.status_code != 200:
            r.read()
            return error_message(r)
        events = [json.loads(e) for e in sse_events(r) if e != "[DONE]"]
    errors = [e["error"]["message"] for e in events if "error" in e]
    assert errors, events
    return errors[-1]


def test_truncated_model_file_fails_requests_but_not_the_server(tessera_bin, model_path, tmp_path):
    copy = tmp_path / "model.gguf"
    shutil.copyfile(model_path, copy)
    server = ServerProcess(tessera_bin, str(copy))
    try:
        with httpx.Client(timeout=120) as client:
            url = server.base_url
            good = client.post(url + "/v1/completions", json=COMPLETION)
            assert good.status_code == 200, good.text

            os.truncate(copy, os.path.getsize(copy) // 2)
            # The first request after the cut runs a forward pass over the lost
            # pages (zeros now, not SIGBUS); the engine notices and fails it.
            first = client.post(url + "/v1/completions", json=COMPLETION)
            assert PHRASE in error_message(first), first.text
            # Later requests are refused up front, streamed or not.
            again = client.post(url + "/v1/chat/completions",
                                json={"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4})
            assert PHRASE in error_message(again), again.text
            assert PHRASE in streamed_error(client, url)

            assert server.proc.poll() is None, server.log_text()
            assert client.get(url + "/health").status_code == 200
            assert client.get(url + "/ready").status_code == 503
            assert client.get(url + "/metrics").status_code == 200
            # One log line says what happened.
            deadline = time.time() + 5
            while PHRASE not in server.log_text() and time.time() < deadline:
                time.sleep(0.05)
            assert server.log_text().count(PHRASE) == 1, server.log_text()
    finally:
        code = server.stop()
    assert code == 0, server.final_log
