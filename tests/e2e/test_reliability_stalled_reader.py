# A client that sends a streaming request and then stops reading: once the
# socket buffers fill, the server's write blocks; --io-timeout must end that
# write, cancel the generation and free its blocks, while other clients are
# served normally the whole time.
import json
import socket
import time

import httpx
import pytest

from server_fixture import ServerProcess, metric, wait_until_idle

MAX_TOKENS = 6000  # minutes of generation if the stalled stream were never cancelled
N_CHOICES = 16  # with 20 logprobs each, a step writes ~16 KB: the socket buffers fill within seconds


@pytest.fixture(scope="module")
def server(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path, ["--io-timeout", "1", "--max-context", "8192"])
    yield srv
    assert srv.stop() == 0, srv.final_log


def stalled_stream(port):
    """Opens a streaming completion with big chunks and a tiny receive buffer, never reads."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)  # before connect: caps the TCP window
    sock.connect(("127.0.0.1", port))
    body = json.dumps({"prompt": "Once upon a time", "max_tokens": MAX_TOKENS, "ignore_eos": True,
                       "temperature": 0.8, "logprobs": 20, "n": N_CHOICES, "stream": True}).encode()
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    return sock


def test_client_that_stops_reading_is_cancelled(server):
    base = server.base_url
    before = metric(httpx.get(base + "/metrics").text, "tessera_generation_tokens_total")
    sock = stalled_stream(server.port)
    try:
        # The stalled request starts running...
        deadline = time.time() + 60
        while metric(httpx.get(base + "/metrics").text, "tessera_num_requests_running") < 1:
            assert time.time() < deadline, "the stalled request never started"
            time.sleep(0.1)
        # ...and while it is stuck, another client is served in full.
        r = httpx.post(base + "/v1/completions", json={"prompt": "The sky is", "max_tokens": 8, "temperature": 0},
                       timeout=120)
        assert r.status_code == 200 and r.json()["choices"][0]["finish_reason"] == "length", r.text
        # The server gives up on the stalled socket and cancels its generation, long before MAX_TOKENS.
        assert wait_until_idle(server, timeout=400), "the stalled stream was never cancelled"
    finally:
        sock.close()
    text = httpx.get(base + "/metrics").text
    generated = metric(text, "tessera_generation_tokens_total") - before
    assert generated < N_CHOICES * MAX_TOKENS, f"{generated} tokens: the stalled request ran to completion"
    assert metric(text, "tessera_kv_blocks_used") == metric(text, "tessera_kv_blocks_cached")  # nothing held
    print(f"stalled stream cancelled after {generated - 8:.0f} tokens")
