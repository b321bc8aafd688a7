#!/usr/bin/env python3
"""Structured-output throughput (issue 26's two serving targets).

Starts `tessera serve` itself (loopback; serving_bench.py's helpers) and
alternates, rep by rep, so every configuration sees the same machine load:
  (a) 16 concurrent chat requests with a json_schema response_format (a list
      of people records) against the same 16 requests unconstrained
      (ignore_eos), max_tokens 128: output tokens/s, and their ratio
      (target >= 0.9);
  (b) one answer of a schema with many fixed keys and short values,
      end-to-end seconds on a server with --jump-forward 32 against one with
      --jump-forward 0 (target >= 1.5x), checking both outputs are equal;
      also the server's CPU seconds for the answer (steadier than wall time
      on a loaded machine).
Prints medians over --reps and writes every sample to --json.

Usage: python3 bench/structured_bench.py [--model M.gguf] [--threads 2] [--reps 5]
       [--skip-a] [--skip-b] [--json out.json]
"""
import argparse
import asyncio
import json
import os
import pathlib
import statistics
import sys
import time

import httpx

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import serving_bench  # noqa: E402  (Server, tessera(): one way to start a server)

ROOT = serving_bench.ROOT
CONCURRENCY = 16
MAX_TOKENS = 128

PEOPLE_SCHEMA = {
    "type": "object",
    "properties": {
        "people": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "maxLength": 40},
                    "city": {"type": "string", "maxLength": 40},
                    "age": {"type": "integer"},
                    "employed": {"type": "boolean"},
                },
                "required": ["name", "city", "age", "employed"],
            },
        },
    },
    "required": ["people"],
}

# Every key fixed and required, values short: most of the answer is forced.
FIXED_KEYS = ["customer_identifier", "account_status_code", "preferred_contact_method", "shipping_country_name",
              "billing_postal_code", "loyalty_program_tier", "number_of_previous_orders", "marketing_emails_allowed",
              "assigned_support_region", "last_review_rating", "requires_signature_on_delivery",
              "gift_wrapping_requested"]
FIXED_SCHEMA = {
    "type": "object",
    "properties": {k: ({"type": "boolean"} if k.endswith(("allowed", "delivery", "requested")) else
                       {"type": "integer"} if k.startswith(("number", "last")) else
                       {"type": "string", "maxLength": 8}) for k in FIXED_KEYS},
    "required": FIXED_KEYS,
}


def people_body(i, constrained):
    body = {"messages": [{"role": "user", "content": f"Request {i}: list some people with their name, city, age and "
                                                      f"whether they are employed, as JSON. Start with person {i}."}],
            "max_tokens": MAX_TOKENS, "temperature": 0}
    if constrained:
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": "people", "schema": PEOPLE_SCHEMA}}
    else:
        body["ignore_eos"] = True
    return body


async def concurrent_run(url, constrained):
    """16 requests at once; returns (output tokens/s, completion tokens)."""
    async with httpx.AsyncClient(timeout=900) as client:
        async def one(i):
            r = await client.post(url + "/v1/chat/completions", json=people_body(i, constrained))
            r.raise_for_status()
            out = r.json()
            if constrained and out["choices"][0]["finish_reason"] == "stop":
                json.loads(out["choices"][0]["message"]["content"])  # a finished answer must parse
            return out["usage"]["completion_tokens"]

        start = time.perf_counter()
        tokens = await asyncio.gather(*(one(i) for i in range(CONCURRENCY)))
        wall = time.perf_counter() - start
    return sum(tokens) / wall, sum(tokens)


def cpu_seconds(pid):
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fixed_key_answer(url):
    body = {"messages": [{"role": "user", "content": "Fill in this customer record as JSON."}], "max_tokens": 400,
            "temperature": 0, "response_format": {"type": "json_schema",
                                                  "json_schema": {"name": "record", "schema": FIXED_SCHEMA}}}
    start = time.perf_counter()
    r = httpx.post(url + "/v1/chat/completions", json=body, timeout=900)
    wall = time.perf_counter() - start
    r.raise_for_status()
    out = r.json()
    return wall, out["choices"][0]["message"]["content"], out["usage"]["completion_tokens"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.environ.get("TESSERA_MODEL",
                                                      str(ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf")))
    ap.add_argument("--tessera", default=str(ROOT / "build" / "tessera"))
    ap.add_argument("--tessera-arg", action="append", default=[], help="extra tessera serve argument, repeatable")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--skip-a", action="store_true")
    ap.add_argument("--skip-b", action="store_true")
    ap.add_argument("--json", help="write every sample here")
    args = ap.parse_args()
    results = {"a": {"constrained": [], "unconstrained": []},
               "b": {"jf32": [], "jf0": [], "jf32_cpu": [], "jf0_cpu": []}}

    if not args.skip_a:
        server = serving_bench.tessera(args)
        try:
            asyncio.run(concurrent_run(server.url, False))  # warm-up: weights paged in
            for rep in range(args.reps):
                # Alternate which goes first so drift in the machine's load cancels.
                order = [True, False] if rep % 2 == 0 else [False, True]
                for constrained in order:
                    tps, tokens = asyncio.run(concurrent_run(server.url, constrained))
                    results["a"]["constrained" if constrained else "unconstrained"].append(tps)
                    print(f"(a) rep {rep} {'constrained' if constrained else 'unconstrained'}: {tps:.1f} tok/s "
                          f"({tokens} tokens)", flush=True)
        finally:
            server.stop()
        c, u = (statistics.median(results["a"][k]) for k in ("constrained", "unconstrained"))
        results["a"]["ratio"] = c / u
        print(f"(a) 16 streams: constrained {c:.1f} tok/s, unconstrained {u:.1f} tok/s, ratio {c / u:.2f}")

    if not args.skip_b:
        servers = {}
        try:
            for name, n in (("jf32", "32"), ("jf0", "0")):
                servers[name] = serving_bench.tessera(args, "--jump-forward", n)
            texts = {}
            for name, s in servers.items():
                texts[name] = fixed_key_answer(s.url)[1]  # warm-up (and the grammar's first compile)
            for rep in range(args.reps):
                for name in (["jf32", "jf0"] if rep % 2 == 0 else ["jf0", "jf32"]):
                    cpu_before = cpu_seconds(servers[name].proc.pid)
                    wall, text, tokens = fixed_key_answer(servers[name].url)
                    cpu = cpu_seconds(servers[name].proc.pid) - cpu_before
                    if text != texts[name]:
                        raise RuntimeError(f"{name}: the answer changed between runs")
                    results["b"][name].append(wall)
                    results["b"][name + "_cpu"].append(cpu)
                    print(f"(b) rep {rep} {name}: {wall * 1000:.0f} ms, server CPU {cpu:.2f} s ({tokens} tokens)",
                          flush=True)
        finally:
            for s in servers.values():
                s.stop()
        same = texts["jf32"] == texts["jf0"]
        j, p, jc, pc = (statistics.median(results["b"][k]) for k in ("jf32", "jf0", "jf32_cpu", "jf0_cpu"))
        results["b"].update(speedup=p / j, cpu_speedup=pc / jc, same_output=same, answer=texts["jf32"])
        print(f"(b) fixed-key answer: jump-forward 32 {j * 1000:.0f} ms, 0 {p * 1000:.0f} ms, speedup {p / j:.2f}x; "
              f"server CPU {jc:.2f} s vs {pc:.2f} s, {pc / jc:.2f}x; outputs {'identical' if same else 'DIFFER'}")
        print(f"    answer: {texts['jf32']}")

    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
