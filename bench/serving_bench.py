#!/usr/bin/env python3
"""Serving benchmark: tessera serve vs llama.cpp's llama-server, side by side.

Starts the servers itself (loopback only), then alternates them measurement by
measurement with tools/loadgen.py so both see the same machine load:
  (a) ~100-token prompts, 128 output tokens (ignore_eos), at concurrency
      1, 4, 16, 32: output throughput and TTFT / TPOT percentiles;
  (b) a shared ~1,000-token prefix plus a unique ~32-token suffix, 48 requests,
      16 concurrent clients, 32 output tokens; tessera with its prefix cache
      on and off.
While tessera runs (a) it samples /metrics to measure KV waste: the share of
the slots of blocks not held by the prefix cache alone that hold no token
(running sequences' empty tail slots and free halves of split blocks).
Prints Markdown tables.

Usage: python3 bench/serving_bench.py [--model M.gguf] [--llama-server PATH]
       [--threads 2] [--levels 1,4,16,32] [--json out.json]
"""
import argparse
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import httpx

ROOT = pathlib.Path(__file__).resolve().parents[1]
LOADGEN = ROOT / "tools" / "loadgen.py"
KV_TOKENS = 32768  # KV capacity given to every server (tokens)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One server process on a loopback port; stop() always ends it."""

    def __init__(self, name, args, ready_path, timeout=300):
        self.name, self.port = name, free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile(prefix=f"bench-{name}-", suffix=".log", delete=False)
        self.proc = subprocess.Popen([*args, "--host", "127.0.0.1", "--port", str(self.port)],
                                     stdout=self.log, stderr=self.log)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{name} exited; log in {self.log.name}")
            try:
                if httpx.get(self.url + ready_path, timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"{name} never became ready; log in {self.log.name}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def tessera(args, *extra):
    cmd = [str(args.tessera), "serve", "-m", args.model, "--threads", str(args.threads), "--ctx-size",
           str(KV_TOKENS), *args.tessera_arg, *extra]
    return Server("tessera" + "".join(extra), cmd, "/ready")


def llama_server(args):
    cmd = [args.llama_server, "-m", args.model, "-np", "16", "-c", str(KV_TOKENS), "-t", str(args.threads),
           "-tb", str(args.threads), "-fa", "on", "--no-webui"]
    return Server("llama-server", cmd, "/health")


class WasteSampler:
    """Polls tessera's /metrics while a run is in flight; keeps steady-state samples."""

    def __init__(self, url, min_running):
        self.url, self.min_running, self.samples = url, min_running, []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._poll)
        self.thread.start()

    def _poll(self):
        while not self.done.wait(0.25):
            try:
                text = httpx.get(self.url + "/metrics", timeout=5).text
            except httpx.HTTPError:
                continue
            m = {k: float(v) for k, v in re.findall(r"^(tessera_\w+)(?:\{model=\"[^\"]*\"\})? (\S+)$", text, re.M)}
            held = m["tessera_kv_blocks_used"] - m["tessera_kv_blocks_cached"]
            if m["tessera_num_requests_running"] >= self.min_running and held > 0:
                self.samples.append((m["tessera_kv_slots_unfilled"], held * m["tessera_kv_block_size"]))

    def stop(self):
        self.done.set()
        self.thread.join()
        if not self.samples:
            return None
        return sum(u for u, _ in self.samples) / sum(h for _, h in self.samples)


def loadgen(url, extra):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    cmd = [sys.executable, str(LOADGEN), "--url", url, "--ignore-eos", "--timeout", "900", "--json", out, *extra]
    load_before = os.getloadavg()[0]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        summary = json.load(f)["runs"][0]["summary"]
    os.unlink(out)
    summary["loadavg"] = (load_before, os.getloadavg()[0])  # other work on the machine, for the record
    return summary


def workload_a(level):
    requests = min(32, max(4, 2 * level))  # bounded so the slowest server still finishes in minutes
    return ["--requests", str(requests), "--concurrency", str(level), "--prompt-words", "96", "--max-tokens", "128",
            "--seed", str(level)]  # new prompts per level: no prefix-cache hits across levels


# loadgen's words are about one token each; "Request i:" adds four.
WORKLOAD_B = ["--requests", "48", "--concurrency", "16", "--shared-prefix-words", "1000", "--prompt-words", "28",
              "--max-tokens", "32", "--seed", "7"]


def ms(v):
    return "-" if v is None else f"{v * 1000:.0f}"


def row(name, s, extra=""):
    return (f"| {name} | {s['requests'] - s['errors']}/{s['requests']} | {s['output_tok_per_s']:.1f} | "
            f"{ms(s['ttft_p50_s'])} | {ms(s['ttft_p99_s'])} | {ms(s['tpot_p50_s'])} | {ms(s['tpot_p99_s'])} | "
            f"{s['prompt_tokens']} ({s['cached_tokens']} cached) | {s['loadavg'][0]:.0f} / {s['loadavg'][1]:.0f} |{extra}")


HEADER = ("| server | ok/requests | output tok/s | TTFT p50 ms | TTFT p99 ms | TPOT p50 ms | TPOT p99 ms | "
          "prompt tokens | load avg before / after |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.environ.get("TESSERA_MODEL",
                                                      str(ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf")))
    ap.add_argument("--tessera", default=str(ROOT / "build" / "tessera"))
    ap.add_argument("--llama-server", help="path to llama.cpp's llama-server (omit to run tessera alone)")
    ap.add_argument("--tessera-arg", action="append", default=[],
                    help="extra tessera serve argument, repeatable (e.g. --tessera-arg=--block-size --tessera-arg=8)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--levels", default="1,4,16,32")
    ap.add_argument("--skip-a", action="store_true")
    ap.add_argument("--skip-b", action="store_true")
    ap.add_argument("--json", help="write every summary here")
    args = ap.parse_args()

    servers = {"tessera": tessera(args)}
    results = {"a": {}, "b": {}}
    try:
        if args.llama_server:
            servers["llama-server"] = llama_server(args)
        for s in servers.values():  # warm-up: page the weights in
            loadgen(s.url, ["--requests", "2", "--concurrency", "2", "--prompt-words", "20", "--max-tokens", "8",
                             "--seed", "99"])
        if not args.skip_a:
            for level in [int(x) for x in args.levels.split(",")]:
                for name, s in servers.items():
                    sampler = WasteSampler(s.url, level) if name == "tessera" else None
                    summary = loadgen(s.url, workload_a(level))
                    if sampler:
                        summary["kv_waste"] = sampler.stop()
                    results["a"][f"{name} c={level}"] = summary
                    print(row(f"{name} c={level}", summary), flush=True)
        if not args.skip_b:
            servers["tessera --no-prefix-cache"] = tessera(args, "--no-prefix-cache")
            for name, s in servers.items():
                summary = loadgen(s.url, WORKLOAD_B)
                results["b"][name] = summary
                print(row(name, summary), flush=True)
    finally:
        for s in servers.values():
            s.stop()

    print("\n## (a) ~100-token prompts, 128 output tokens\n\n" + HEADER + " KV waste |\n|" + "---|" * 10)
    for name, s in results["a"].items():
        waste = s.get("kv_waste")
        print(row(name, s, f" {'-' if waste is None else f'{100 * waste:.1f}%'} |"))
    print("\n## (b) shared ~1,000-token prefix, 48 requests, 16 clients, 32 output tokens\n\n" + HEADER + "\n|" +
          "---|" * 9)
    for name, s in results["b"].items():
        print(row(name, s))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
