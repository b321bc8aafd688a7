#!/usr/bin/env python3
"""Speculative decoding benchmark: decode speed with and without drafts.

single: `tessera run` (greedy unless --temp, chat template) on input-grounded prompts
  (rewrite a paragraph with one word changed, fix a bug in a function,
  summarise with quotes) and open-ended ones, each configuration run in turn
  for every prompt and repetition (alternating, so all see the same machine
  load). Reports the median generation rate per configuration, its ratio to
  plain decoding of the same target, the acceptance rate, and checks that
  every configuration printed the same text as plain decoding (with --temp
  > 0 only point-mass drafts must: a draft model samples its drafts then).
  Configurations: the target plain and with --spec ngram; with --draft-target
  FILE also that target plain and with --draft-model (the --model file).
batch: `tessera serve` with and without --spec ngram under tools/loadgen.py
  at the given concurrency (alternating servers), output throughput ratio.
server: single-stream decode through `tessera serve --draft-model` and
  llama.cpp's `llama-server --model-draft` on the same pair (--draft-target
  is the target, --model the draft), each also without its draft; the four
  servers answer every prompt in turn (streamed chat completions, greedy),
  decode rate = tokens after the first / time after the first.

Usage: python3 bench/spec_bench.py single [--model M] [--draft-target F32.gguf] [--reps 3] [--temp 0.8]
       python3 bench/spec_bench.py batch [--model M] [--concurrency 32]
       python3 bench/spec_bench.py server --draft-target F32.gguf --llama-server PATH [--reps 2]
"""
import argparse
import json
import pathlib
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import httpx

ROOT = pathlib.Path(__file__).resolve().parents[1]
TESSERA = ROOT / "build" / "tessera"
DEFAULT_MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"

PARAGRAPH = ("The old lighthouse stood on the northern cliff for two hundred years. Every night its keeper "
             "climbed the spiral stairs, trimmed the wick and watched the ships pass safely through the strait. "
             "In winter the storms came from the west, and the keeper wrote each one into a leather book that "
             "still sits on the shelf by the door.")
BUGGY = ("def count_words(path):\n    counts = {}\n    with open(path) as f:\n        for line in f:\n"
         "            for word in line.split():\n                word = word.lower().strip(\".,;:!?\")\n"
         "                if word:\n                    counts[word] = counts.get(word, 0) + 1\n"
         "    ranked = sorted(counts.items(), key=lambda kv: kv[1])\n    return ranked[:10]\n")
ARTICLE = ("The town council met on Tuesday to discuss the new bridge. \"We cannot wait another year,\" said the "
           "mayor, Ana Ruiz. Engineers warned that the old bridge carries twice the traffic it was built for. "
           "\"Every winter the cracks grow wider,\" said the chief engineer, Tom Bell. The council voted seven to "
           "two to start construction in the spring.")
GROUNDED = [
    "Copy the following paragraph, but replace the word 'northern' with 'southern'. Output only the "
    "paragraph.\n\n" + PARAGRAPH,
    "There is a bug in this code: the sort order is wrong. Show the corrected code.\n\n```python\n" + BUGGY + "```",
    "Summarise the article below in three sentences. Quote the mayor's and the engineer's words exactly, in "
    "quotation marks.\n\n" + ARTICLE,
]
OPEN = [
    "Write a short story about a robot who learns to paint.",
    "Explain why the sky is blue to a ten-year-old.",
    "Give me three ideas for a weekend trip in the mountains.",
]


def run_once(model, prompt, n, threads, extra, temp):
    args = [str(TESSERA), "run", "-m", str(model), "--chat", "-p", prompt, "-n", str(n), "--temp", str(temp),
            "--seed", "7", "--threads", str(threads), *extra]
    r = subprocess.run(args, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)} failed:\n{r.stderr}")
    gen = re.search(r"generation: (\d+) tokens in ([\d.]+) s", r.stderr)
    spec = re.search(r"speculation \((\w+)\): (\d+) drafted, (\d+) accepted", r.stderr)
    tokens, seconds = int(gen.group(1)), float(gen.group(2))
    return {"text": r.stdout, "tokens": tokens, "seconds": seconds,
            "drafted": int(spec.group(2)) if spec else 0, "accepted": int(spec.group(3)) if spec else 0}


def single(a):
    configs = [("plain", a.model, []), ("ngram", a.model, ["--spec", "ngram"])]
    if a.draft_target:
        configs += [("plain (draft target)", a.draft_target, []),
                    ("draft model", a.draft_target, ["--draft-model", str(a.model)]),
                    ("draft target + ngram", a.draft_target, ["--spec", "ngram"])]
    cpu = cpu_name()
    print(f"CPU: {cpu}; threads {a.threads}; {a.max_tokens} tokens per run; {a.reps} repetitions; "
          f"temperature {a.temp}\n")
    for set_name, prompts in (("input-grounded", GROUNDED), ("open-ended", OPEN)):
        rates = {c[0]: [] for c in configs}
        drafted = {c[0]: 0 for c in configs}
        accepted = {c[0]: 0 for c in configs}
        mismatches = []
        for rep in range(a.reps):
            for i, p in enumerate(prompts):
                base_text = {}
                for name, model, extra in configs:
                    r = run_once(model, p, a.max_tokens, a.threads, extra, a.temp)
                    rates[name].append(r["tokens"] / r["seconds"])
                    drafted[name] += r["drafted"]
                    accepted[name] += r["accepted"]
                    ref = base_text.setdefault(str(model), r["text"])
                    if r["text"] != ref and (a.temp == 0 or name != "draft model"):
                        mismatches.append((name, i))
        print(f"### {set_name} prompts\n")
        print("| configuration | decode t/s (median) | vs plain of the same target | accepted / drafted |")
        print("|---|---|---|---|")
        for name, model, _ in configs:
            plain = "plain" if model == a.model else "plain (draft target)"
            med = statistics.median(rates[name])
            ratio = med / statistics.median(rates[plain])
            acc = f"{accepted[name]} / {drafted[name]}" if drafted[name] else "-"
            print(f"| {name} | {med:.1f} | {ratio:.2f}x | {acc} |")
        print(f"\ntexts equal to plain decoding: {'all' if not mismatches else mismatches}\n")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(model, threads, extra):
    port = free_port()
    log = tempfile.TemporaryFile()
    p = subprocess.Popen([str(TESSERA), "serve", "-m", str(model), "--host", "127.0.0.1", "--port", str(port),
                          "--threads", str(threads), *extra], stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(url + "/ready", timeout=2).status_code == 200:
                return p, url
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    p.kill()
    sys.exit("server did not start")


def loadgen(url, a, seed):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([sys.executable, str(ROOT / "tools" / "loadgen.py"), "--url", url, "--requests",
                        str(a.requests), "--concurrency", str(a.concurrency), "--prompt-words", "75",
                        "--max-tokens", "128", "--ignore-eos", "--seed", str(seed), "--json", out.name],
                       check=True, capture_output=True)
        data = json.load(open(out.name))
    return data["runs"][0]["summary"]["output_tok_per_s"]


def batch(a):
    servers = {"plain": serve(a.model, a.threads, []), "ngram": serve(a.model, a.threads, ["--spec", "ngram"])}
    try:
        rates = {k: [] for k in servers}
        for rep in range(a.reps):
            for name, (_, url) in servers.items():
                rates[name].append(loadgen(url, a, rep))  # the same prompts for both, new ones per repetition
        print(f"CPU: {cpu_name()}; concurrency {a.concurrency}, {a.requests} requests x 128 tokens, "
              f"{a.reps} repetitions alternating")
        for name in servers:
            print(f"{name}: output t/s {[round(r, 1) for r in rates[name]]}")
        ratio = statistics.median(rates["ngram"]) / statistics.median(rates["plain"])
        print(f"ngram / plain output throughput (medians): {ratio:.3f}")
    finally:
        for p, _ in servers.values():
            p.terminate()
            p.wait()


def stream_decode(url, prompt, max_tokens):
    """One greedy streamed chat completion: (text, decode tokens/s after the first token)."""
    body = {"messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens, "temperature": 0,
            "stream": True, "stream_options": {"include_usage": True}}
    text, first, tokens = [], None, None
    with httpx.stream("POST", url + "/v1/chat/completions", json=body, timeout=900) as r:
        for line in r.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if chunk.get("usage"):
                tokens = chunk["usage"]["completion_tokens"]
            for c in chunk.get("choices", []):
                if c.get("delta", {}).get("content"):
                    first = first or time.perf_counter()
                    text.append(c["delta"]["content"])
    return "".join(text), (tokens - 1) / (time.perf_counter() - first)


def server_mode(a):
    sys.path.insert(0, str(ROOT / "bench"))
    from serving_bench import Server  # noqa: E402
    t = a.threads
    tessera = [str(TESSERA), "serve", "-m", str(a.draft_target), "--threads", str(t), "--ctx-size", "4096"]
    llama = [a.llama_server, "-m", str(a.draft_target), "-np", "1", "-c", "4096", "-t", str(t), "-tb", str(t),
             "-fa", "on", "--no-webui"]
    configs = {"tessera": (tessera, "/ready"), "tessera --draft-model": (tessera + ["--draft-model", str(a.model)], "/ready"),
               "llama-server": (llama, "/health"),
               "llama-server --model-draft": (llama + ["-md", str(a.model), "-td", str(t), "-tbd", str(t)], "/health")}
    servers = {}
    try:
        for name, (cmd, ready) in configs.items():
            servers[name] = Server(name.replace(" ", ""), cmd, ready)
        print(f"CPU: {cpu_name()}; threads {t}; {a.max_tokens} tokens; {a.reps} repetitions; target {a.draft_target.name}, "
              f"draft {a.model.name}\n")
        for set_name, prompts in (("input-grounded", GROUNDED), ("open-ended", OPEN)):
            rates = {n: [] for n in servers}
            differ = []
            for _rep in range(a.reps):
                for i, p in enumerate(prompts):
                    texts = {}
                    for name, srv in servers.items():
                        texts[name], rate = stream_decode(srv.url, p, a.max_tokens)
                        rates[name].append(rate)
                    for plain, spec in (("tessera", "tessera --draft-model"), ("llama-server", "llama-server --model-draft")):
                        if texts[plain] != texts[spec]:
                            differ.append((spec, i))
            print(f"### {set_name} prompts\n")
            print("| server | decode t/s (median) | vs its plain |")
            print("|---|---|---|")
            for name in servers:
                plain = "tessera" if name.startswith("tessera") else "llama-server"
                med = statistics.median(rates[name])
                print(f"| {name} | {med:.1f} | {med / statistics.median(rates[plain]):.2f}x |")
            print(f"\ndraft texts equal to their plain server's: {'all' if not differ else differ}\n")
    finally:
        for srv in servers.values():
            srv.stop()


def cpu_name():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["single", "batch", "server"])
    ap.add_argument("--model", type=pathlib.Path, default=DEFAULT_MODEL)
    ap.add_argument("--draft-target", type=pathlib.Path, help="a larger or full-precision target for --model")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--temp", type=float, default=0.0, help="sampling temperature of `single` (seed 7)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--requests", type=int, default=64)
    ap.add_argument("--llama-server", help="llama.cpp's llama-server (server mode)")
    a = ap.parse_args()
    {"single": single, "batch": batch, "server": server_mode}[a.mode](a)


if __name__ == "__main__":
    main()
