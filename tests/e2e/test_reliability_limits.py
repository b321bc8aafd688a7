# Connection and request limits: slow clients (slowloris, headers or body
# trickled a byte at a time) are dropped at --request-timeout without hurting
# others; header count/size, body size and the protocol caps (n, max_tokens vs
# context, top_logprobs, stop, logit_bias, token ids, the size of a
# non-streamed response) answer 4xx at the edge.
import os
import select
import signal
import socket
import threading
import time

import httpx
import pytest

from server_fixture import ServerProcess

MAX_CONTEXT = 512
BODY_LIMIT = 64 * 1024
RESPONSE_LIMIT = 4096  # n x max_tokens x (logprobs + 1) of a non-streamed response


@pytest.fixture(scope="module")
def server(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path,
                        ["--request-timeout", "2", "--http-threads", "4", "--max-headers", "40",
                         "--max-body-bytes", str(BODY_LIMIT), "--max-context", str(MAX_CONTEXT),
                         "--max-response-tokens", str(RESPONSE_LIMIT)])
    yield srv
    assert srv.stop() == 0, srv.final_log


def trickle(sock, payload, interval, result, key):
    """Sends payload one byte per interval; records whether and when the server dropped the connection."""
    start = time.time()
    try:
        for b in payload:
            sock.sendall(bytes([b]))
            time.sleep(interval)
        result[key] = ("completed", time.time() - start)
    except OSError:
        result[key] = ("dropped", time.time() - start)
    finally:
        sock.close()


def test_slow_clients_are_dropped_without_hurting_others(server):
    # Bytes keep arriving, so only the request deadline can stop them.
    header = b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Pad: " + b"a" * 200
    result, threads = {}, []
    for i in range(3):  # 3 of the 4 HTTP threads held by slowloris clients
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        payload = header
        if i == 2:  # headers at once, then the body a byte at a time
            sock.sendall(b"POST /tokenize HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\n\r\n")
            payload = b"{" * 200
        t = threading.Thread(target=trickle, args=(sock, payload, 0.2, result, i))
        t.start()
        threads.append(t)
    time.sleep(0.5)
    # Others are served meanwhile, and repeatedly.
    for _ in range(5):
        r = httpx.post(server.base_url + "/tokenize", json={"content": "hello"}, timeout=5)
        assert r.status_code == 200
    for t in threads:
        t.join(30)
    for key, (how, when) in result.items():
        assert how == "dropped" and when < 4.5, (key, how, when)  # limit 2 s + scan interval + send buffering
    # All four threads are free again: four slow-ish requests at once all go through.
    with httpx.Client(base_url=server.base_url, timeout=30) as c:
        codes = [c.get("/health").status_code for _ in range(4)]
    assert codes == [200] * 4


def test_idle_connection_is_closed(server):
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    start = time.time()
    assert s.recv(1) == b""  # closed by the server, having sent nothing
    assert time.time() - start < 4.5
    s.close()


def test_a_connection_that_keeps_working_is_not_dropped(server):
    # Keep-alive requests back to back for longer than the request timeout.
    with httpx.Client(base_url=server.base_url, timeout=10) as c:
        start = time.time()
        while time.time() - start < 3:
            assert c.post("/tokenize", json={"content": "hi"}).status_code == 200
            time.sleep(0.3)


def test_header_count_and_size(server):
    ok = {f"X-H{i}": "v" for i in range(30)}
    assert httpx.get(server.base_url + "/health", headers=ok).status_code == 200
    many = {f"X-H{i}": "v" for i in range(60)}
    r = httpx.get(server.base_url + "/health", headers=many)
    assert r.status_code == 431 and r.json()["error"]["code"] == "headers_too_large"
    # A head within --max-header-bytes (16 KiB by default) is fine; one byte past it is a 431.
    assert httpx.get(server.base_url + "/health", headers={"X-Big": "a" * 9000}, timeout=5).status_code == 200
    r = httpx.get(server.base_url + "/health", headers={"X-Big": "a" * 16384}, timeout=5)
    assert r.status_code == 431 and r.json()["error"]["code"] == "headers_too_large"
    assert httpx.get(server.base_url + "/health").status_code == 200


def test_body_size_limit_is_exact(server):
    body = b'{"content": "hi"}'
    fits = body + b" " * (BODY_LIMIT - len(body))
    assert httpx.post(server.base_url + "/tokenize", content=fits).status_code == 200
    r = httpx.post(server.base_url + "/tokenize", content=fits + b" ")
    assert r.status_code == 413 and r.json()["error"]["code"] == "payload_too_large"


def post(server, path, body):
    return httpx.post(server.base_url + path, json=body, timeout=120)


def test_protocol_caps_at_their_edges(server):
    chat = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}
    comp = {"prompt": "Hi", "max_tokens": 1}
    assert post(server, "/v1/chat/completions", {**chat, "n": 16}).status_code == 200
    assert post(server, "/v1/chat/completions", {**chat, "n": 17}).json()["error"]["param"] == "n"
    lp = {**chat, "logprobs": True}
    assert post(server, "/v1/chat/completions", {**lp, "top_logprobs": 20}).status_code == 200
    assert post(server, "/v1/chat/completions", {**lp, "top_logprobs": 21}).status_code == 400
    assert post(server, "/v1/completions", {**comp, "logprobs": 21}).status_code == 400
    assert post(server, "/v1/completions", {**comp, "stop": ["s"] * 16}).status_code == 200
    assert post(server, "/v1/completions", {**comp, "stop": ["s"] * 17}).json()["error"]["param"] == "stop"
    assert post(server, "/v1/completions", {**comp, "stop": "s" * 257}).status_code == 400
    assert post(server, "/v1/completions", {**comp, "logit_bias": {str(i): 1 for i in range(1025)}}).status_code == 400
    assert post(server, "/v1/completions", {**comp, "logit_bias": {"0": 101}}).status_code == 400
    assert post(server, "/v1/completions", {"prompt": [49151], "max_tokens": 1}).status_code == 200
    assert post(server, "/v1/completions", {"prompt": [49152], "max_tokens": 1}).status_code == 400


def test_context_limit_is_exact(server):
    ids = [28] * (MAX_CONTEXT - 1)
    r = post(server, "/v1/completions", {"prompt": ids, "max_tokens": 1, "temperature": 0})
    assert r.status_code == 200 and r.json()["usage"]["prompt_tokens"] == MAX_CONTEXT - 1
    r = post(server, "/v1/completions", {"prompt": ids, "max_tokens": 2})
    assert r.status_code == 400 and r.json()["error"]["code"] == "context_length_exceeded"
    r = post(server, "/v1/completions", {"prompt": ids + [28], "max_tokens": 1})
    assert r.status_code == 400 and r.json()["error"]["code"] == "context_length_exceeded"
    r = post(server, "/v1/completions", {"prompt": [28] * 10, "max_tokens": MAX_CONTEXT})
    assert r.status_code == 400 and r.json()["error"]["param"] == "max_tokens"


def test_prompt_too_long_by_its_bytes_is_refused_before_tokenizing(server):
    # 60 KB is far more than 512 tokens of any text for this vocabulary; only
    # the byte-length check words its refusal "at least".
    r = post(server, "/v1/completions", {"prompt": "x" * 60000, "max_tokens": 1})
    err = r.json()["error"]
    assert r.status_code == 400 and err["code"] == "context_length_exceeded" and "at least" in err["message"], err


def test_non_streamed_response_size_cap_is_exact(server):
    body = {"prompt": "Hi", "max_tokens": 16, "n": 16, "temperature": 0}
    r = post(server, "/v1/completions", {**body, "logprobs": 15})  # 16 x 16 x 16 = 4096
    assert r.status_code == 200 and len(r.json()["choices"]) == 16
    r = post(server, "/v1/completions", {**body, "logprobs": 16})
    err = r.json()["error"]
    assert r.status_code == 400 and err["code"] == "response_too_large" and err["param"] == "max_tokens", err
    with httpx.stream("POST", server.base_url + "/v1/completions", json={**body, "logprobs": 16, "stream": True},
                      timeout=120) as r:
        assert r.status_code == 200
        assert r.read().rstrip().endswith(b"data: [DONE]")


def test_a_burst_of_connections_fits_the_listen_backlog(server):
    """64 clients connecting at once all get through the handshake, even while the server process is
    frozen: the kernel queues them up to the listen backlog (cpp-httplib's default of 5 dropped the
    rest until their SYN retries a second or more later); then every one is served."""
    n = 64
    socks = [socket.socket() for _ in range(n)]
    os.kill(server.proc.pid, signal.SIGSTOP)
    try:
        for s in socks:
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", server.port))
        pending, deadline = set(socks), time.time() + 0.5  # loopback handshakes take microseconds
        while pending and time.time() < deadline:
            _, done, _ = select.select([], list(pending), [], deadline - time.time())
            pending -= {s for s in done if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0}
    finally:
        os.kill(server.proc.pid, signal.SIGCONT)
    assert not pending, f"{len(pending)} of {n} connections were not accepted by the kernel"
    for s in socks:
        s.setblocking(True)
        s.settimeout(30)
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    for s in socks:
        reply = b""
        while chunk := s.recv(4096):
            reply += chunk
        s.close()
        assert reply.startswith(b"HTTP/1.1 200"), reply[:100]
