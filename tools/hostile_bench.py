#!/usr/bin/env python3
"""The hostile-client attacks of docs/RELIABILITY.md at full size, against
tessera and llama-server side by side: for each attack, the status the
attacker gets, the server's peak RSS growth while it lasts and what is still
resident a second later, and for the idle-connection flood the latency of a
normal request against a baseline measured in the same run.

    python3 tools/hostile_bench.py --model models/SmolLM2-135M-Instruct.Q4_1.gguf \\
        --tessera build/tessera --llama-server PATH/TO/llama-server

Sends traffic only to 127.0.0.x; every loop is bounded in count and time.
"""
import argparse
import json
import re
import resource
import socket
import statistics
import subprocess
import threading
import time
import zlib

import httpx

MiB = 1 << 20


def rss(pid):
    return int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{pid}/status").read()).group(1)) * 1024


class Server:
    def __init__(self, name, args, port):
        self.name, self.port = name, port
        self.url = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                if httpx.get(self.url + "/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(name + " did not start")

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def measured(server, attack):
    """Runs attack(); returns (outcome, peak RSS growth MiB, growth still resident 1 s later MiB)."""
    base, peak, stop = rss(server.proc.pid), [0], threading.Event()

    def sample():
        while not stop.is_set() and server.alive():
            peak[0] = max(peak[0], rss(server.proc.pid) - base)
            time.sleep(0.005)

    t = threading.Thread(target=sample)
    t.start()
    try:
        outcome = attack()
    except Exception as e:  # noqa: BLE001 -- the outcome is what the attacker saw
        outcome = f"client error: {type(e).__name__}"
    stop.set()
    t.join()
    if not server.alive():
        return outcome + " (server died)", peak[0] / MiB, float("nan")
    time.sleep(1)
    return outcome, peak[0] / MiB, (rss(server.proc.pid) - base) / MiB


def status_line(sock, timeout=30):
    sock.settimeout(timeout)
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    return data.split(b"\r\n")[0].decode(errors="replace") or "closed without a reply"


def stream_body(server, head, chunks, limit):
    """Sends head then chunks until the server answers or closes; returns (status line, MiB sent)."""
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.sendall(head)
    sent = 0
    try:
        for chunk in chunks:
            sock.setblocking(False)
            try:
                if sock.recv(1, socket.MSG_PEEK):
                    break
            except BlockingIOError:
                pass
            sock.setblocking(True)
            sock.settimeout(10)
            sock.sendall(chunk)
            sent += len(chunk)
            if sent >= limit:
                break
    except OSError:
        pass
    sock.setblocking(True)
    line = status_line(sock)
    sock.close()
    return f"{line} after {sent / MiB:.0f} MiB sent"


def gzip_bomb(server):
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = b"\0" * MiB
    body = b"".join(comp.compress(zeros) for _ in range(1024)) + comp.flush()  # 1 GiB -> ~1 MB
    r = httpx.post(server.url + "/v1/completions", content=body, timeout=300,
                   headers={"Content-Encoding": "gzip", "Content-Type": "application/json"})
    return f"{r.status_code} ({len(body) / MiB:.1f} MiB gzip of 1 GiB)"


def chunked_300mb(server):
    piece = 256 * 1024
    frame = f"{piece:x}\r\n".encode() + b"a" * piece + b"\r\n"
    head = b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    return stream_body(server, head, (frame for _ in range(300 * MiB // piece)), 300 * MiB)


def header_flood(server, per_conn=100 * MiB, conns=4):
    line = b"X-Flood: " + b"a" * 1000 + b"\r\n"
    block = line * 1024
    results = [None] * conns

    def one(i):
        results[i] = stream_body(server, b"GET /health HTTP/1.1\r\nHost: x\r\n",
                                 (block for _ in range(per_conn // len(block))), per_conn)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    return "; ".join(sorted(set(r or "?" for r in results)))


def tokenize_pieces(server):
    content = "hello world, " * (6 * MiB // 13)
    t = time.perf_counter()
    r = httpx.post(server.url + "/tokenize", json={"content": content, "with_pieces": True}, timeout=600)
    return f"{r.status_code} in {time.perf_counter() - t:.1f} s"


def big_choices(server):
    body = {"prompt": "Once upon a time", "n": 16, "logprobs": 20, "max_tokens": 4000, "ignore_eos": True}
    t = time.perf_counter()
    r = httpx.post(server.url + "/v1/completions", json=body, timeout=1800)
    return f"{r.status_code} in {time.perf_counter() - t:.1f} s, {len(r.content) / MiB:.0f} MiB reply"


def huge_prompt(server):
    t = time.perf_counter()
    r = httpx.post(server.url + "/v1/completions", json={"prompt": "hello world " * (7 * MiB // 12), "max_tokens": 1},
                   timeout=600)
    return f"{r.status_code} in {time.perf_counter() - t:.2f} s"


def pipelined(server):
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n" * 3)
    sock.settimeout(5)
    data, deadline = b"", time.time() + 5
    try:
        while data.count(b"HTTP/1.1 200") < 3 and time.time() < deadline:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    sock.close()
    return f"{data.count(b'HTTP/1.1 200')} of 3 answered"


def latency(server, n=20):
    out = []
    with httpx.Client(base_url=server.url, timeout=900) as c:
        for _ in range(n):
            t = time.perf_counter()
            c.post("/v1/completions", json={"prompt": "The sky is", "max_tokens": 4, "temperature": 0})
            out.append(time.perf_counter() - t)
    return statistics.median(out)


def idle_flood(server, n=300):
    base = latency(server)
    stop, socks = threading.Event(), []
    for i in range(n):
        s = socket.socket()
        s.bind((f"127.0.0.{2 + i % 8}", 0))
        s.connect(("127.0.0.1", server.port))
        s.setblocking(False)
        socks.append(s)

    def reopen():
        while not stop.is_set():
            for i, s in enumerate(socks):
                try:
                    if s.recv(1) != b"":
                        continue
                except BlockingIOError:
                    continue
                except OSError:
                    pass
                s.close()
                s = socket.socket()
                s.bind((f"127.0.0.{2 + i % 8}", 0))
                s.connect(("127.0.0.1", server.port))
                s.setblocking(False)
                socks[i] = s
            time.sleep(0.05)

    t = threading.Thread(target=reopen)
    t.start()
    try:
        loaded = latency(server)
    finally:
        stop.set()
        t.join()
        for s in socks:
            s.close()
    return f"median {base * 1000:.0f} -> {loaded * 1000:.0f} ms with {n} idle"


def open_streams(port, n, stop, counts):
    """n streaming completions on raw sockets, read and discarded in one thread (selectors)."""
    import selectors
    sel = selectors.DefaultSelector()
    body = json.dumps({"prompt": "Once upon a time", "max_tokens": 2000, "ignore_eos": True, "stream": True}).encode()
    req = (b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
           + str(len(body)).encode() + b"\r\n\r\n" + body)
    for i in range(n):
        s = socket.socket()
        s.bind((f"127.0.0.{100 + i % 8}", 0))
        s.connect(("127.0.0.1", port))
        s.sendall(req)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
    counts["streams"] = n
    while not stop.is_set():
        for key, _ in sel.select(0.1):
            try:
                data = key.fileobj.recv(65536)
            except BlockingIOError:
                continue
            counts["bytes"] = counts.get("bytes", 0) + len(data)
            if not data:
                sel.unregister(key.fileobj)
                key.fileobj.close()
                counts["ended"] = counts.get("ended", 0) + 1
    for key in list(sel.get_map().values()):
        key.fileobj.close()


def health_latency(server, n=50):
    out = []
    with httpx.Client(base_url=server.url, timeout=60) as c:
        for _ in range(n):
            t = time.perf_counter()
            assert c.get("/health").status_code == 200
            out.append(time.perf_counter() - t)
    return statistics.median(out)


def scale(server, idle=10000, streams=1000):
    """Issue 29's target: 10,000 idle connections plus 1,000 active streams; a normal request's latency
    (transport: /health; engine: a 4-token completion) with the streams alone, then with the idle ones too."""
    stop, counts = threading.Event(), {}
    t = threading.Thread(target=open_streams, args=(server.port, streams, stop, counts))
    t.start()
    idle_socks = []
    try:
        while "streams" not in counts:
            time.sleep(0.1)
        time.sleep(5)
        h0, c0 = health_latency(server), latency(server, 3)
        for i in range(idle):
            s = socket.socket()
            s.bind((f"127.0.0.{2 + i % 16}", 0))
            s.connect(("127.0.0.1", server.port))
            idle_socks.append(s)
        time.sleep(2)
        h1, c1 = health_latency(server), latency(server, 3)
    finally:
        stop.set()
        t.join()
        for s in idle_socks:
            s.close()
    return (f"/health {h0 * 1000:.1f} -> {h1 * 1000:.1f} ms, completion {c0:.2f} -> {c1:.2f} s "
            f"({streams} streams, {counts.get('ended', 0)} ended, + {idle} idle)")


ATTACKS = [("gzip bomb (1 MB -> 1 GB)", gzip_bomb), ("chunked body, 300 MB", chunked_300mb),
           ("header flood, 4 x 100 MB", header_flood), ("/tokenize 6 MB with pieces", tokenize_pieces),
           ("prompt of 7 MB", huge_prompt), ("n=16, logprobs=20, max_tokens=4000", big_choices),
           ("3 pipelined requests", pipelined), ("300 idle connections, reopened", idle_flood),
           ("10,000 idle + 1,000 streams", scale)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--tessera", default="build/tessera")
    ap.add_argument("--llama-server")
    ap.add_argument("--skip", nargs="*", default=[], help="attack numbers (1-based) to leave out")
    ap.add_argument("--json")
    a = ap.parse_args()
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the scale attack needs 11,000 sockets
    servers = [("tessera", [a.tessera, "serve", "-m", a.model, "--port", "18601", "--threads", "2",
                            "--max-seqs", "1024", "--max-waiting", "2048", "--kv-memory", "4G"], 18601)]
    if a.llama_server:
        servers.append(("llama-server", [a.llama_server, "-m", a.model, "--port", "18602", "-t", "2", "-c", "8192",
                                         "-np", "16", "--host", "127.0.0.1"], 18602))
    results = {}
    for i, (label, attack) in enumerate(ATTACKS, 1):
        if str(i) in a.skip:
            continue
        for name, args, port in servers:  # one server at a time, fresh for every attack
            srv = Server(name, args, port)
            try:
                outcome, peak, left = measured(srv, lambda: attack(srv))
            finally:
                srv.stop()
            results.setdefault(label, {})[name] = (outcome, peak, left)
            print(f"{label:38s} {name:13s} {outcome:60s} peak +{peak:7.1f} MiB, left +{left:7.1f} MiB", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
