#!/usr/bin/env python3
"""KV disk tier benchmark: a shared-prefix workload whose prefix set is larger
than the RAM KV budget, served with and without --kv-disk.

Each request is one of N long shared prefixes (a "system prompt" of about
--prefix-tokens tokens) followed by a short question, max_tokens 1, sent one
at a time, the prefixes in turn (round robin: with a RAM budget of a few
prefixes, LRU eviction has always just dropped the next one). TTFT is the
request's latency (one output token, streamed and timed to its first chunk).
Both servers are warmed with one pass over the prefixes, then measured for
--rounds passes, alternating server by server per round so both see the same
machine load. Then the disk-tier server is restarted on the same directory
and one more pass measures the hit rate (cached prompt tokens / prompt
tokens) a restart keeps, against the hit rate before it.

Usage: python3 bench/kv_disk_bench.py [--model M] [--prefixes 8] [--prefix-tokens 1000]
       [--kv-memory 48M] [--rounds 3]
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import httpx

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from server_fixture import ServerProcess  # noqa: E402

DEFAULT_MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


def prefix_text(i, n_tokens):
    # ~21 tokens per sentence for SmolLM2's tokenizer.
    return "".join(f"Policy {i}.{k}: team {i} keeps {k * 3 + i} spare parts in bay {k % 9}. "
                   for k in range(max(1, n_tokens // 21)))


def ttft(server, prompt):
    start = time.monotonic()
    first = None
    usage = None
    with httpx.stream("POST", server.base_url + "/v1/completions",
                      json={"prompt": prompt, "max_tokens": 1, "temperature": 0, "stream": True,
                            "stream_options": {"include_usage": True}}, timeout=600) as r:
        for line in r.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if first is None and chunk.get("choices"):
                first = time.monotonic() - start
            if chunk.get("usage"):
                usage = chunk["usage"]
    return first, usage["prompt_tokens"], (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)


def one_pass(server, prefixes, round_no):
    out = []
    for i, p in enumerate(prefixes):
        out.append(ttft(server, p + f"\nQuestion {round_no}-{i}: how many spare parts are in bay 3?"))
    return out


def hit_rate(results):
    return sum(c for _, _, c in results) / sum(n for _, n, _ in results)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=str(DEFAULT_MODEL))
    ap.add_argument("--tessera", default=str(ROOT / "build" / "tessera"))
    ap.add_argument("--prefixes", type=int, default=8)
    ap.add_argument("--prefix-tokens", type=int, default=1000)
    ap.add_argument("--kv-memory", default="48M")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    prefixes = [prefix_text(i, args.prefix_tokens) for i in range(args.prefixes)]
    common = ["--kv-memory", args.kv_memory]
    with tempfile.TemporaryDirectory(prefix="kv_disk_bench_") as tier:
        disk_args = common + ["--kv-disk", tier, "--kv-disk-size", "2G"]
        disk = ServerProcess(args.tessera, args.model, disk_args)
        ram = ServerProcess(args.tessera, args.model, common)
        try:
            one_pass(disk, prefixes, -1)
            one_pass(ram, prefixes, -1)
            measured = {"disk": [], "ram": []}
            for r in range(args.rounds):
                measured["disk"] += one_pass(disk, prefixes, r)
                measured["ram"] += one_pass(ram, prefixes, r)
        finally:
            disk.stop()
            ram.stop()
        disk = ServerProcess(args.tessera, args.model, disk_args)
        try:
            after = one_pass(disk, prefixes, args.rounds)
        finally:
            disk.stop()
    p50 = {k: statistics.median(t for t, _, _ in v) for k, v in measured.items()}
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model_name = next((l.split(":", 1)[1].strip() for l in cpu.splitlines() if l.startswith("Model name")), "?")
    print(f"CPU: {model_name}")
    print(f"workload: {args.prefixes} prefixes of ~{measured['ram'][0][1]} prompt tokens, RAM KV {args.kv_memory}, "
          f"{args.rounds} rounds, max_tokens 1")
    print(f"TTFT p50 with --kv-disk: {p50['disk'] * 1000:.1f} ms (hit rate {hit_rate(measured['disk']):.3f})")
    print(f"TTFT p50 recomputing:    {p50['ram'] * 1000:.1f} ms (hit rate {hit_rate(measured['ram']):.3f})")
    print(f"ratio: {p50['ram'] / p50['disk']:.2f}x")
    print(f"after a restart: hit rate {hit_rate(after):.3f}, TTFT p50 {statistics.median(t for t, _, _ in after) * 1000:.1f} ms "
          f"({hit_rate(after) / hit_rate(measured['disk']):.3f} of the hit rate before)")


if __name__ == "__main__":
    main()
