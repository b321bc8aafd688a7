#!/usr/bin/env python3
# Soak test for `tessera serve`: N concurrent streaming clients for T seconds
# (shared-prefix and unique prompts, stop strings, random disconnects), every
# completed stream checked, server RSS / fds / threads / KV blocks sampled.
"""Usage:
  soak.py --bin build/tessera --model MODEL.gguf --clients 64 --duration 300 [--json out.json]
  soak.py --url http://127.0.0.1:8080 --pid PID ...      (a server you started)

Every completed stream must have exactly one finish_reason, end with [DONE],
be valid UTF-8 and -- for prompts from the fixed pool, at temperature 0 --
carry exactly the text of a reference run of the same request made alone
before the soak. Fresh unique prompts (no reference) get the structural checks.
Pass: no stream lost or corrupted, RSS growth after warm-up (T/4, or later
once the KV pool has been full: its pages are touched lazily) < 5%, and once
idle every used KV block is held only by the prefix cache (nothing leaked),
fds back to the pre-soak level. Exit status 0 on pass, 1 on fail.
"""
import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import httpx

SYSTEM = ("You are a helpful assistant for a small bakery. You answer questions about bread, cakes and "
          "opening hours politely and briefly. The bakery opens at seven and closes at six. ") * 3
QUESTIONS = ["What time do you open?", "Do you sell rye bread?", "Name three cakes.", "Is there parking?",
             "Can I order a birthday cake?", "What is sourdough?", "Do you have gluten-free bread?",
             "How much is a croissant?"]
UNIQUE = ["Write a haiku about the sea.", "List the planets.", "Explain photosynthesis briefly.",
          "Translate 'good morning' to French."]
MAX_TOKENS = 24


class Server:
    """A server process this tool started (or attached to with --url/--pid)."""

    def __init__(self, args):
        self.proc, self.log = None, None
        if args.url:
            self.url, self.pid = args.url.rstrip("/"), args.pid
            return
        self.log = tempfile.NamedTemporaryFile(prefix="soak-serve-", suffix=".log", delete=False)
        cmd = [args.bin, "serve", "-m", args.model, "--host", "127.0.0.1", "--port", "0", *args.server_args]
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log)
        self.pid = self.proc.pid
        deadline = time.time() + 60
        while time.time() < deadline:
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", self.log_text())
            if m:
                self.url = f"http://127.0.0.1:{m.group(1)}"
                break
            time.sleep(0.05)
        else:
            self.stop()
            raise RuntimeError("server did not start:\n" + self.log_text())
        while time.time() < deadline + 600:
            try:
                if httpx.get(self.url + "/ready", timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None:
                raise RuntimeError("server exited:\n" + self.log_text())
            time.sleep(0.2)
        raise RuntimeError("server never became ready")

    def log_text(self):
        with open(self.log.name, encoding="utf-8", errors="replace") as f:
            return f.read()

    def stop(self):
        if not self.proc:
            return None
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.log.close()
        os.unlink(self.log.name)
        return code


def sample(server):
    """RSS (KiB), threads, open fds of the server and its KV gauges."""
    out = {"t": time.time()}
    with open(f"/proc/{server.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                out["rss_kb"] = int(line.split()[1])
            elif line.startswith("Threads:"):
                out["threads"] = int(line.split()[1])
    out["fds"] = len(os.listdir(f"/proc/{server.pid}/fd"))
    metrics = httpx.get(server.url + "/metrics", timeout=10).text
    for name in ("kv_blocks_used", "kv_blocks_cached", "kv_blocks_total", "num_requests_running",
                 "num_requests_waiting"):
        m = re.search(rf"^tessera_{name}(?:\{{model=\"[^\"]*\"\}})? (\S+)$", metrics, re.M)
        out[name] = float(m.group(1)) if m else None
    return out


def request_body(prompt, stop):
    body = {"messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
            if prompt in QUESTIONS else [{"role": "user", "content": prompt}],
            "max_tokens": MAX_TOKENS, "temperature": 0, "stream": True}
    if stop:
        body["stop"] = [stop]
    return body


def run_stream(client, body, disconnect_after=None):
    """Streams one chat request. Returns (text, error or None); disconnect_after: close early."""
    chunks, done, finishes, raw = [], False, [], b""
    with client.stream("POST", "/v1/chat/completions", json=body) as r:
        if r.status_code != 200:
            return None, f"status {r.status_code}: {r.read()[:200]!r}"
        for i, piece in enumerate(r.iter_raw()):
            raw += piece
            if disconnect_after is not None and i >= disconnect_after:
                return None, None
    try:
        text_all = raw.decode("utf-8")  # strict: the stream must be valid UTF-8
    except UnicodeDecodeError as e:
        return None, f"invalid UTF-8: {e}"
    for line in text_all.split("\n"):
        if not line.startswith("data: "):
            if line.strip():
                return None, f"unexpected line {line[:80]!r}"
            continue
        data = line[len("data: "):]
        if done:
            return None, "data after [DONE]"
        if data == "[DONE]":
            done = True
            continue
        c = json.loads(data)
        if "error" in c:
            return None, f"error event {data[:200]}"
        ch = c["choices"][0]
        chunks.append(ch["delta"].get("content") or "")
        if ch["finish_reason"]:
            finishes.append(ch["finish_reason"])
    if not done:
        return None, "no [DONE]"
    if len(finishes) != 1 or finishes[0] not in ("stop", "length"):
        return None, f"finish reasons {finishes}"
    return "".join(chunks), None


def prompt_pool(size):
    """size prompts, two thirds sharing the long system prompt, the rest without it."""
    n_shared = min(len(QUESTIONS), max(1, size * 2 // 3))
    return QUESTIONS[:n_shared] + UNIQUE[:max(0, size - n_shared)]


def make_references(server, pool):
    """Greedy text for every (pool prompt, stop) alone; stop = a word from the stop-less text."""
    refs = {}
    with httpx.Client(base_url=server.url, timeout=300) as c:
        for p in pool:
            text, err = run_stream(c, request_body(p, None))
            if err:
                raise RuntimeError(f"reference run failed: {err}")
            refs[(p, None)] = text
            words = [w for w in re.findall(r"[A-Za-z]{4,}", text)]
            if words:
                stop = words[len(words) // 2]
                stext, err = run_stream(c, request_body(p, stop))
                if err:
                    raise RuntimeError(f"reference run failed: {err}")
                refs[(p, stop)] = stext
    return refs


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {"completed": 0, "checked_against_reference": 0, "disconnected": 0, "unique": 0}
        self.failures = []

    def add(self, key, n=1):
        with self.lock:
            self.counts[key] += n

    def fail(self, msg):
        with self.lock:
            self.failures.append(msg)


def client_loop(server, refs, stats, deadline, seed, args):
    rng = random.Random(seed)
    keys = list(refs)
    disconnect_rate = args.disconnect_rate
    with httpx.Client(base_url=server.url, timeout=args.client_timeout) as c:
        n = 0
        while time.time() < deadline:
            n += 1
            if rng.random() < 0.2:
                prompt, stop = f"Request {seed}-{n}: {rng.choice(UNIQUE)} Nonce {rng.random()}.", None
            else:
                prompt, stop = rng.choice(keys)
            disconnect = rng.randrange(1, 8) if rng.random() < disconnect_rate else None
            try:
                text, err = run_stream(c, request_body(prompt, stop), disconnect)
            except (httpx.HTTPError, json.JSONDecodeError, KeyError) as e:
                text, err = None, f"{type(e).__name__}: {e}"
            if disconnect is not None and err is None and text is None:
                stats.add("disconnected")
                continue
            if err:
                stats.fail(f"{prompt[:40]!r} stop={stop!r}: {err}")
                continue
            stats.add("completed")
            if (prompt, stop) in refs:
                stats.add("checked_against_reference")
                if text != refs[(prompt, stop)]:
                    stats.fail(f"{prompt[:40]!r} stop={stop!r}: text {text!r} != reference {refs[(prompt, stop)]!r}")
            else:
                stats.add("unique")
            if stop and stop in text:
                stats.fail(f"stop string {stop!r} in output")


def wait_idle(server, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        s = sample(server)
        if s["num_requests_running"] == 0 and s["num_requests_waiting"] == 0:
            return s
        time.sleep(0.2)
    return sample(server)


def soak(args):
    server = Server(args)
    report = {"clients": args.clients, "duration_s": args.duration}
    try:
        t_start = time.time()
        refs = make_references(server, prompt_pool(args.pool))
        report["reference_runs"], report["reference_s"] = len(refs), round(time.time() - t_start, 1)
        baseline = wait_idle(server)
        stats, samples = Stats(), [baseline]
        deadline = time.time() + args.duration
        threads = [threading.Thread(target=client_loop, args=(server, refs, stats, deadline, i, args))
                   for i in range(args.clients)]
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            time.sleep(args.sample_every)
            samples.append(sample(server))
        for t in threads:
            t.join()
        report["load_s"] = round(time.time() - deadline + args.duration, 1)
        time.sleep(1.0)  # let closed connections and cancellations settle
        idle = wait_idle(server)
        samples.append(idle)
        report.update(evaluate(args, baseline, samples, idle, stats))
    finally:
        code = server.stop()
        report["exit_code"] = code
    if code not in (None, 0):
        report["pass"] = False
        report["problems"].append(f"server exit code {code}")
    return report


def evaluate(args, baseline, samples, idle, stats):
    t0 = samples[0]["t"]
    # KV pages are zero until first written, so RSS grows until every block has
    # been used once: the warm-up lasts until the pool was full (on a slow or
    # loaded machine later than --warmup), then growth is what a leak adds.
    full = [s["t"] for s in samples
            if s["kv_blocks_total"] and s["kv_blocks_used"] is not None and s["kv_blocks_used"] >= s["kv_blocks_total"]]
    warm_from = max(args.warmup, full[0] - t0) if full and full[0] - t0 < 0.75 * args.duration else args.warmup
    warm = [s for s in samples if s["t"] - t0 >= warm_from]
    rss_warm, rss_end = (warm[0]["rss_kb"], warm[-1]["rss_kb"]) if warm else (None, None)
    slope = None
    if len(warm) >= 3:
        xs = [(s["t"] - t0) / 60 for s in warm]
        ys = [s["rss_kb"] / 1024 for s in warm]
        mx, my = statistics.mean(xs), statistics.mean(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / max(1e-9, sum((x - mx) ** 2 for x in xs))
    problems = list(stats.failures[:20])
    growth = (rss_end - rss_warm) / rss_warm if rss_warm else None
    if growth is not None and growth >= 0.05:
        problems.append(f"RSS grew {growth:.1%} after warm-up")
    if idle["kv_blocks_used"] != idle["kv_blocks_cached"]:
        problems.append(f"idle: {idle['kv_blocks_used']} KV blocks used but only {idle['kv_blocks_cached']} cached")
    if idle["fds"] > baseline["fds"] + 2:
        problems.append(f"fds {baseline['fds']} before, {idle['fds']} idle after")
    if stats.counts["completed"] == 0:
        problems.append("no stream completed")
    return {"pass": not problems and not stats.failures, "problems": problems, "failures": len(stats.failures),
            **stats.counts,
            "rss_mb": {"baseline": baseline["rss_kb"] / 1024, "after_warmup": rss_warm and rss_warm / 1024,
                       "end": rss_end and rss_end / 1024, "max": max(s["rss_kb"] for s in samples) / 1024,
                       "growth_after_warmup": growth, "slope_mb_per_min": slope,
                       "warmup_s": round(warm_from, 1)},
            "threads": {"baseline": baseline["threads"], "max": max(s["threads"] for s in samples),
                        "idle": idle["threads"]},
            "fds": {"baseline": baseline["fds"], "max": max(s["fds"] for s in samples), "idle": idle["fds"]},
            "kv_blocks": {"total": idle["kv_blocks_total"], "max_used": max(s["kv_blocks_used"] for s in samples),
                          "idle_used": idle["kv_blocks_used"], "idle_cached": idle["kv_blocks_cached"]}}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/tessera")
    ap.add_argument("--model", default=os.environ.get("TESSERA_MODEL", "models/SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("--url", help="attach to a running server instead of starting one (needs --pid)")
    ap.add_argument("--pid", type=int)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--duration", type=float, default=60, help="seconds of load")
    ap.add_argument("--warmup", type=float, default=None, help="seconds before RSS growth counts (default: T/4)")
    ap.add_argument("--sample-every", type=float, default=2.0)
    ap.add_argument("--pool", type=int, default=len(QUESTIONS) + len(UNIQUE),
                    help="prompts with a reference run (each also with a stop string)")
    ap.add_argument("--client-timeout", type=float, default=300,
                    help="seconds a request may wait for the server (queueing included)")
    ap.add_argument("--disconnect-rate", type=float, default=0.1)
    ap.add_argument("--server-args", nargs=argparse.REMAINDER, default=["--threads", "2"],
                    help="extra `tessera serve` flags (last on the command line)")
    ap.add_argument("--json", help="write the report here")
    args = ap.parse_args(argv)
    if args.url and not args.pid:
        ap.error("--url needs --pid (to sample RSS, fds and threads)")
    if args.warmup is None:
        args.warmup = args.duration / 4
    report = soak(args)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    return 0 if report["pass"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
