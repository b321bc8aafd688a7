#!/usr/bin/env python3
"""Load generator for any OpenAI-compatible server (tessera, llama-server, vLLM).

Sends streaming /v1/completions requests with a fixed concurrency (or a
sweep of several, one run each) or Poisson arrivals, synthetic prompts of a
chosen length (optionally a shared prefix plus a unique suffix per request),
and reports output throughput and TTFT / TPOT / end-to-end latency
percentiles as a table and, with --json, as JSON. With --plot DIR it also
draws PNG charts (matplotlib): latency CDFs, throughput against concurrency,
and TTFT over the run.

Examples:
  python3 tools/loadgen.py --url http://127.0.0.1:8080 --requests 32 --concurrency 16 \\
      --prompt-words 75 --max-tokens 128
  python3 tools/loadgen.py --url http://127.0.0.1:8080 --requests 48 --concurrency 16 \\
      --shared-prefix-words 750 --prompt-words 24 --max-tokens 32
  python3 tools/loadgen.py --requests 32 --concurrency 1,4,16 --max-tokens 64 --ignore-eos --plot plots/
"""
import argparse
import asyncio
import json
import random
import statistics
import sys
import time

import httpx

WORDS = ("time person year way day thing man world life hand part child eye woman place work week case point "
         "government company number group problem fact river mountain garden window letter market music story "
         "table money road forest bridge island engine doctor teacher village animal summer winter morning").split()


def words(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def build_prompts(args):
    rng = random.Random(args.seed)
    shared = words(rng, args.shared_prefix_words) + "\n\n" if args.shared_prefix_words else ""
    prompts = []
    for i in range(args.requests):
        n = max(1, int(rng.gauss(args.prompt_words, args.prompt_words_jitter))) if args.prompt_words_jitter else args.prompt_words
        prompts.append(f"{shared}Request {i}: {words(rng, n)}")
    return prompts


async def one_request(client, args, prompt):
    body = {"prompt": prompt, "max_tokens": args.max_tokens, "temperature": args.temperature,
            "stream": True, "stream_options": {"include_usage": True}}
    if args.model:  # a server answers a request that names no model with its own
        body["model"] = args.model
    if args.ignore_eos:
        body["ignore_eos"] = True
    headers = {"Authorization": f"Bearer {args.api_key}"} if args.api_key else {}
    t0 = time.perf_counter()
    ttft, chunks, usage, error = None, 0, None, None
    try:
        async with client.stream("POST", f"{args.url}/v1/completions", json=body, headers=headers) as r:
            if r.status_code != 200:
                return {"start": t0, "error": f"HTTP {r.status_code}: {(await r.aread())[:200]!r}",
                        "e2e": time.perf_counter() - t0}
            async for line in r.aiter_lines():
                if not line.startswith("data: "):
                    continue
                data = line[6:]
                if data == "[DONE]":
                    break
                obj = json.loads(data)
                if obj.get("error"):  # a failure reported inside the stream
                    error = f"stream error: {json.dumps(obj['error'])[:200]}"
                    break
                if obj.get("usage"):
                    usage = obj["usage"]
                for ch in obj.get("choices", []):
                    if ch.get("text"):
                        chunks += 1
                        if ttft is None:
                            ttft = time.perf_counter() - t0
    except (httpx.HTTPError, json.JSONDecodeError) as e:
        error = repr(e)
    e2e = time.perf_counter() - t0
    n_out = usage["completion_tokens"] if usage else chunks
    tpot = (e2e - ttft) / (n_out - 1) if ttft is not None and n_out > 1 else None
    cached = ((usage or {}).get("prompt_tokens_details") or {}).get("cached_tokens", 0) or 0
    return {"start": t0, "ttft": ttft, "tpot": tpot, "e2e": e2e, "out_tokens": n_out,
            "prompt_tokens": (usage or {}).get("prompt_tokens", 0), "cached_tokens": cached, "error": error}


async def run(args):
    prompts = build_prompts(args)
    limits = httpx.Limits(max_connections=args.concurrency + 8, max_keepalive_connections=args.concurrency + 8)
    results = []
    async with httpx.AsyncClient(timeout=httpx.Timeout(args.timeout), limits=limits) as client:
        t0 = time.perf_counter()
        if args.rate:
            rng = random.Random(args.seed + 1)
            tasks = []
            for p in prompts:
                tasks.append(asyncio.create_task(one_request(client, args, p)))
                await asyncio.sleep(rng.expovariate(args.rate))
            results = await asyncio.gather(*tasks)
        else:
            queue = list(prompts)

            async def worker():
                while queue:
                    results.append(await one_request(client, args, queue.pop(0)))

            await asyncio.gather(*(worker() for _ in range(args.concurrency)))
        wall = time.perf_counter() - t0
    for r in results:
        r["start"] -= t0  # seconds since the run began
    return results, wall


def pct(values, q):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    k = min(len(values) - 1, max(0, int(round(q / 100 * (len(values) - 1)))))
    return values[k]


def summarize(results, wall, args):
    ok = [r for r in results if not r.get("error")]
    out_tokens = sum(r["out_tokens"] for r in ok)
    summary = {
        "requests": len(results), "errors": len(results) - len(ok), "wall_s": wall,
        "concurrency": None if args.rate else args.concurrency, "rate": args.rate,
        "output_tokens": out_tokens, "output_tok_per_s": out_tokens / wall if wall else 0.0,
        "prompt_tokens": sum(r["prompt_tokens"] for r in ok), "cached_tokens": sum(r["cached_tokens"] for r in ok),
    }
    for name in ("ttft", "tpot", "e2e"):
        vals = [r[name] for r in ok]
        for q in (50, 90, 99):
            summary[f"{name}_p{q}_s"] = pct(vals, q)
        summary[f"{name}_mean_s"] = statistics.mean(v for v in vals if v is not None) if any(v is not None for v in vals) else None
    return summary


def fmt(v, ms=True):
    if v is None:
        return "-"
    return f"{v * 1000:.0f} ms" if ms else f"{v:.1f}"


def print_summary(s):
    label = f"concurrency {s['concurrency']}" if s["concurrency"] else f"rate {s['rate']}/s"
    print(f"{label}: requests {s['requests']} (errors {s['errors']}), wall {s['wall_s']:.1f} s, "
          f"output {s['output_tokens']} tokens = {s['output_tok_per_s']:.1f} tok/s, "
          f"prompt {s['prompt_tokens']} tokens ({s['cached_tokens']} cached)")
    print("| metric | p50 | p90 | p99 | mean |")
    print("|---|---|---|---|---|")
    for name in ("ttft", "tpot", "e2e"):
        print(f"| {name.upper()} | {fmt(s[name + '_p50_s'])} | {fmt(s[name + '_p90_s'])} | "
              f"{fmt(s[name + '_p99_s'])} | {fmt(s[name + '_mean_s'])} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--model", default=None, help="model name to send (default: none, the server's own)")
    ap.add_argument("--api-key")
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--concurrency", default="16", help="clients in flight; a comma list runs a sweep, e.g. 1,4,16")
    ap.add_argument("--rate", type=float, help="Poisson arrivals per second instead of fixed concurrency")
    ap.add_argument("--prompt-words", type=int, default=75)
    ap.add_argument("--prompt-words-jitter", type=float, default=0.0)
    ap.add_argument("--shared-prefix-words", type=int, default=0)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--temperature", type=float, default=0.0)
    ap.add_argument("--ignore-eos", action="store_true", help="send ignore_eos (tessera, llama-server, vLLM)")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="write the summaries and per-request results here")
    ap.add_argument("--plot", metavar="DIR", help="write PNG charts here (needs matplotlib)")
    ap.add_argument("--title", default="", help="a line for the charts' titles (server, model, CPU)")
    args = ap.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    runs = []
    for i, level in enumerate([None] if args.rate else levels):
        # Fresh prompts per level (seed + i): no prefix-cache hits across the runs of a sweep.
        run_args = argparse.Namespace(**{**vars(args), "concurrency": level or max(levels), "seed": args.seed + i})
        results, wall = asyncio.run(run(run_args))
        s = summarize(results, wall, run_args)
        if args.rate:
            s["concurrency"] = None
        print_summary(s)
        runs.append({"summary": s, "results": results})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "runs": runs}, f, indent=1)
    if args.plot:
        from loadgen_plots import write_charts
        for path in write_charts(runs, args.plot, args.title):
            print(f"chart: {path}")
    results = [r for run_ in runs for r in run_["results"]]
    errors = [r["error"] for r in results if r.get("error")]
    if errors:
        print(f"first error: {errors[0]}", file=sys.stderr)
    return 1 if len(errors) == len(results) else 0


if __name__ == "__main__":
    sys.exit(main())
