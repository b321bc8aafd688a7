# Attacks that need no API key, scaled to CI size (docs/RELIABILITY.md has the
# full-size table): each asserts the status the attacker gets and, in the
# Release build, how much the server's resident memory grew while it lasted,
# sampled from /proc every few milliseconds. Under ASan the allocator keeps
# freed memory in quarantine, so there only the statuses are asserted.
import gzip
import os
import pathlib
import re
import resource
import select
import socket
import statistics
import threading
import time

import httpx
import pytest

from server_fixture import ServerProcess

SANITIZED = "asan" in os.environ.get("TESSERA_BIN", "")
MiB = 1 << 20
API_KEY = "hostile-test-key"


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


class RssPeak:
    """Peak RSS growth of a process over a with-block, sampled every 5 ms."""

    def __init__(self, pid):
        self.pid, self.peak, self.stop = pid, 0, threading.Event()

    def __enter__(self):
        self.base = rss_bytes(self.pid)
        self.thread = threading.Thread(target=self._run)
        self.thread.start()
        return self

    def _run(self):
        while not self.stop.is_set():
            self.peak = max(self.peak, rss_bytes(self.pid) - self.base)
            time.sleep(0.005)

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self.peak = max(self.peak, rss_bytes(self.pid) - self.base)

    def assert_below(self, limit, what):
        if not SANITIZED:
            assert self.peak < limit, f"{what}: RSS grew {self.peak / MiB:.1f} MiB (limit {limit / MiB:.0f})"


@pytest.fixture(scope="module")
def server(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path, ["--request-timeout", "3", "--max-context", "2048"])
    yield srv
    assert srv.stop() == 0, srv.final_log


@pytest.fixture(scope="module")
def keyed(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path, ["--api-key", API_KEY], api_key=API_KEY)
    yield srv
    assert srv.stop() == 0, srv.final_log


def read_reply(sock, timeout=10):
    """Everything the server sends until it closes or goes quiet."""
    sock.settimeout(timeout)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
            if b"\r\n\r\n" in data and len(data) > 0 and _complete(data):
                break
    except (ConnectionResetError, socket.timeout):
        pass
    return data


def _complete(data):
    head, _, body = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return False


def status_of(reply):
    assert reply.startswith(b"HTTP/1.1 "), reply[:200]
    return int(reply[9:12])


def send_until_answered(sock, head, chunks, limit):
    """Sends head then chunks until the server answers (or `limit` bytes went out); returns bytes sent."""
    sock.sendall(head)
    sent = 0
    sock.setblocking(False)
    try:
        for chunk in chunks:
            try:
                if sock.recv(1, socket.MSG_PEEK):
                    break  # the answer is there
            except BlockingIOError:
                pass
            view = memoryview(chunk)
            while view:
                try:
                    n = sock.send(view)
                    view, sent = view[n:], sent + n
                except BlockingIOError:
                    time.sleep(0.001)
                    try:
                        if sock.recv(1, socket.MSG_PEEK):
                            return sent
                    except BlockingIOError:
                        pass
            if sent >= limit:
                break
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        sock.setblocking(True)
    return sent


def test_gzip_bomb_is_refused_before_it_is_read(server):
    bomb = gzip.compress(b"\0" * (256 * MiB), compresslevel=9)  # ~250 KB on the wire
    with RssPeak(server.proc.pid) as rss:
        r = httpx.post(server.base_url + "/v1/completions", content=bomb,
                       headers={"Content-Encoding": "gzip", "Content-Type": "application/json"}, timeout=30)
    assert r.status_code == 415 and r.json()["error"]["code"] == "unsupported_media_type"
    rss.assert_below(50 * MiB, "gzip bomb")
    assert httpx.get(server.base_url + "/health").status_code == 200


def test_chunked_body_is_cut_at_the_body_limit(server):
    """A 300 MB chunked body: 413 once 8 MiB have arrived, long before the rest is sent."""
    total, piece = 300 * MiB, 64 * 1024
    frame = f"{piece:x}\r\n".encode() + b"a" * piece + b"\r\n"
    head = (b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n")
    sock = socket.create_connection(("127.0.0.1", server.port))
    with RssPeak(server.proc.pid) as rss:
        sent = send_until_answered(sock, head, (frame for _ in range(total // piece)), total)
        reply = read_reply(sock)
    sock.close()
    assert status_of(reply) == 413, reply[:300]
    assert sent < 40 * MiB, f"{sent / MiB:.0f} MiB were sent before the 413"  # limit + socket buffers
    rss.assert_below(50 * MiB, "chunked body")


def test_header_flood_is_cut_at_the_head_limit(server):
    """Four connections each sending 64 MiB of header lines get a 431 after 16 KiB; memory stays flat."""
    line = b"X-Flood: " + b"a" * 1000 + b"\r\n"
    results = [None] * 4

    def flood(i):
        sock = socket.create_connection(("127.0.0.1", server.port))
        sent = send_until_answered(sock, b"GET /health HTTP/1.1\r\nHost: x\r\n",
                                   (line * 64 for _ in range(1024)), 64 * MiB)
        results[i] = (sent, read_reply(sock))
        sock.close()

    with RssPeak(server.proc.pid) as rss:
        threads = [threading.Thread(target=flood, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    for sent, reply in results:
        assert sent < 8 * MiB, f"{sent / MiB:.0f} MiB of headers were taken"
        if reply:  # the 431 may be lost to the reset of a socket still being written to
            assert status_of(reply) == 431, reply[:300]
    assert any(reply for _, reply in results), "no flooding client got its 431"
    rss.assert_below(50 * MiB, "header flood")
    assert httpx.get(server.base_url + "/health").status_code == 200


def test_unauthenticated_body_is_never_read(keyed):
    """Without a key, a POST announcing a body (within the limit, or chunked) gets its 401 from the
    head alone: no body byte is sent, and the answer comes anyway."""
    for framing in (b"Content-Length: 4000000", b"Transfer-Encoding: chunked"):
        sock = socket.create_connection(("127.0.0.1", keyed.port))
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     + framing + b"\r\n\r\n")
        reply = read_reply(sock)
        sock.close()
        assert status_of(reply) == 401 and b"invalid_api_key" in reply
    # The auth scheme is case-insensitive (RFC 7235); the key is not.
    r = httpx.get(keyed.base_url + "/v1/models", headers={"Authorization": "bearer " + API_KEY})
    assert r.status_code == 200
    r = httpx.get(keyed.base_url + "/v1/models", headers={"Authorization": "Bearer " + API_KEY.upper()})
    assert r.status_code == 401


def test_tokenize_with_pieces_is_proportionate(server):
    content = "hello world, " * (6 * MiB // 13)  # 6 MB of text, ~1.4M tokens
    with RssPeak(server.proc.pid) as rss:
        r = httpx.post(server.base_url + "/tokenize", json={"content": content, "with_pieces": True}, timeout=120)
    assert r.status_code == 200
    tokens = r.json()["tokens"]
    assert tokens[0]["piece"] == "hello" and len(tokens) > 1_000_000
    del tokens, r
    rss.assert_below(200 * MiB, "/tokenize with pieces")  # was ~400 MB: one JSON object per token
    time.sleep(0.5)
    if not SANITIZED:  # memory goes back after the burst
        assert rss_bytes(server.proc.pid) - rss.base < 40 * MiB


def test_pipelined_requests_all_get_answers(server):
    sock = socket.create_connection(("127.0.0.1", server.port))
    one = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
    body = b'{"content": "hi"}'
    two = (b"POST /tokenize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
           + str(len(body)).encode() + b"\r\n\r\n" + body)
    sock.sendall(one + two + one)
    sock.settimeout(10)
    data = b""
    deadline = time.time() + 10
    while data.count(b"HTTP/1.1 200") < 3 and time.time() < deadline:
        data += sock.recv(65536)
    sock.close()
    assert data.count(b"HTTP/1.1 200") == 3, data
    assert b'"tokens"' in data


def hold_idle_connections(port, sources, per_source, stop, counts):
    """Keeps per_source idle connections open from each source address, reopening those the server
    closes. Waits in poll(), so the holder itself takes no CPU from the server while all are idle."""
    poller, socks = select.poll(), {}

    def open_one(src):
        s = socket.socket()
        s.bind((src, 0))
        s.connect(("127.0.0.1", port))
        socks[s.fileno()] = (src, s)
        poller.register(s, select.POLLIN)

    for src in sources:
        for _ in range(per_source):
            open_one(src)
    counts["opened"] = len(socks)
    while not stop.is_set():
        for fd, _ in poller.poll(100):
            src, s = socks.pop(fd)
            poller.unregister(fd)
            s.close()  # the server closed it (or sent something): reopen, as the attacker would
            open_one(src)
            counts["reopened"] = counts.get("reopened", 0) + 1
    for _, s in socks.values():
        s.close()


def server_threads(server):
    status = pathlib.Path(f"/proc/{server.proc.pid}/status").read_text()
    return int(re.search(r"^Threads:\s+(\d+)", status, re.M).group(1))


def request_latencies(base_url, n=15):
    out = []
    with httpx.Client(base_url=base_url, timeout=30) as c:
        for _ in range(n):
            t = time.perf_counter()
            r = c.post("/v1/completions", json={"prompt": "The sky is", "max_tokens": 4, "temperature": 0})
            out.append(time.perf_counter() - t)
            assert r.status_code == 200
    return out


def test_idle_connections_do_not_slow_others(server):
    """2,000 idle connections (from four client addresses, reopened when the server drops them) cost
    sockets, not threads: the server's thread count does not grow with them, and a normal request's
    latency stays within 20% of a baseline measured in the same run (three rounds, alternating
    without and with the idle connections, medians compared; 50% where the machine is so loaded
    that the baselines alone spread by more than 20%, as a CI run beside other builds saw)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    base, loaded, threads = [], [], []
    for _ in range(3):
        base.append(statistics.median(request_latencies(server.base_url)))
        idle_threads = server_threads(server)
        stop, counts = threading.Event(), {}
        holder = threading.Thread(target=hold_idle_connections,
                                  args=(server.port, [f"127.0.0.{i}" for i in range(2, 6)], 500, stop, counts))
        holder.start()
        try:
            deadline = time.time() + 60
            while "opened" not in counts and time.time() < deadline:
                time.sleep(0.1)
            assert counts.get("opened") == 2000
            loaded.append(statistics.median(request_latencies(server.base_url)))
            threads.append(server_threads(server) - idle_threads)
        finally:
            stop.set()
            holder.join(60)
    assert max(threads) <= 8, f"threads added while 2,000 connections sat idle: {threads}"
    b, l = statistics.median(base), statistics.median(loaded)
    spread = (max(base) - min(base)) / min(base)
    slack = 1.0 if SANITIZED else 0.2 if spread <= 0.2 else 0.5
    assert l <= b * (1 + slack) + 0.005, f"median {l * 1000:.1f} ms vs {b * 1000:.1f} ms ({loaded} vs {base})"


def test_per_client_connection_cap(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path, ["--max-client-connections", "8"])
    try:
        socks = []
        for _ in range(8):
            s = socket.socket()
            s.bind(("127.0.0.2", 0))
            s.connect(("127.0.0.1", srv.port))
            socks.append(s)
        extra = socket.socket()
        extra.bind(("127.0.0.2", 0))
        extra.connect(("127.0.0.1", srv.port))
        assert status_of(read_reply(extra)) == 503
        extra.close()
        # Another client address is not affected.
        assert httpx.get(srv.base_url + "/health").status_code == 200
        for s in socks:
            s.close()
    finally:
        assert srv.stop() == 0, srv.final_log
