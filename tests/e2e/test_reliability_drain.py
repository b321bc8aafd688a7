# Graceful drain on SIGTERM: /ready and new generation requests get 503 at
# once, in-flight streams finish (or, past --drain-timeout, end with a final
# finish_reason chunk and [DONE]), and the process exits 0.
import json
import signal
import threading
import time

import httpx

from server_fixture import ServerProcess


def start_stream(base_url, body, first_chunk, result):
    """Streams body in a thread; sets first_chunk once data flows; result gets the data lines."""
    def run():
        lines = []
        try:
            with httpx.stream("POST", base_url + "/v1/completions", json=body, timeout=120) as r:
                result["status"] = r.status_code
                for line in r.iter_lines():
                    if line.startswith("data: "):
                        lines.append(line[len("data: "):])
                        first_chunk.set()
        except httpx.HTTPError as e:
            result["error"] = repr(e)
        result["lines"] = lines
        first_chunk.set()
    t = threading.Thread(target=run)
    t.start()
    return t


def finish_reasons(lines):
    chunks = [json.loads(x) for x in lines if x != "[DONE]"]
    return [c["choices"][0]["finish_reason"] for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]


def wait_status(url, want, timeout=2.0):
    """Seconds until GET url answers `want` (or None)."""
    start = time.time()
    while time.time() - start < timeout:
        if httpx.get(url, timeout=5).status_code == want:
            return time.time() - start
        time.sleep(0.01)
    return None


def test_sigterm_lets_in_flight_streams_finish(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path, ["--drain-timeout", "60"])
    first, result = threading.Event(), {}
    body = {"prompt": "Once upon a time", "max_tokens": 48, "ignore_eos": True, "stream": True, "temperature": 0}
    t = start_stream(srv.base_url, body, first, result)
    assert first.wait(60), result
    srv.proc.send_signal(signal.SIGTERM)
    took = wait_status(srv.base_url + "/ready", 503)
    assert took is not None and took < 1.0, took
    refused = httpx.post(srv.base_url + "/v1/completions", json={"prompt": "Hi", "max_tokens": 2}, timeout=10)
    assert refused.status_code == 503 and refused.headers["retry-after"]
    assert refused.json()["error"]["code"] == "unavailable"
    assert httpx.get(srv.base_url + "/health", timeout=5).status_code == 200  # still alive while draining
    t.join(120)
    assert result.get("status") == 200 and "error" not in result, result
    assert result["lines"][-1] == "[DONE]"
    assert finish_reasons(result["lines"]) == ["length"]
    assert srv.proc.wait(60) == 0
    srv.stop()


def test_drain_timeout_ends_streams_with_a_final_event(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path, ["--drain-timeout", "1"])
    first, result = threading.Event(), {}
    body = {"prompt": "Once upon a time", "max_tokens": 4000, "ignore_eos": True, "stream": True}
    t = start_stream(srv.base_url, body, first, result)
    assert first.wait(60), result
    start = time.time()
    srv.proc.send_signal(signal.SIGTERM)
    t.join(30)
    ended = time.time() - start
    assert result.get("status") == 200 and "error" not in result, result
    assert result["lines"][-1] == "[DONE]"
    assert finish_reasons(result["lines"]) == ["abort"]
    assert srv.proc.wait(30) == 0
    exited = time.time() - start
    assert ended < 6 and exited < 8, (ended, exited)
    srv.stop()


def test_drain_with_nothing_in_flight_exits_at_once(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path, ["--drain-timeout", "30"])
    start = time.time()
    srv.proc.send_signal(signal.SIGTERM)
    assert srv.proc.wait(30) == 0
    assert time.time() - start < 3
    srv.stop()
