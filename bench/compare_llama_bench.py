#!/usr/bin/env python3
"""Side by side with llama.cpp's own benchmark tools: `tessera bench` against
`llama-bench` (prompt, decode at depths) and `llama-batched-bench` (batched
decode), on the same GGUF files, same thread count, alternating the engines
(which one goes first flips every repetition) so both see the same machine
load. Prints a Markdown table of medians and the tessera/llama.cpp ratio.

Unlike compare_kernels.py it needs no llama-cpp-python: point --llama-bin at
a llama.cpp build's bin/ (e.g. the vendor/llama.cpp of the llama-cpp-python
sdist, built with cmake; docs/BENCHMARKS.md gives the flags per machine).

Usage: python3 bench/compare_llama_bench.py MODEL.gguf [MODEL2.gguf ...] --llama-bin DIR
       [--threads 2] [--reps 3] [--pp 512] [--tg 32] [--depths 0] [--seqs 32]
       [--batch-prompt 16] [--kv-type f16]
Both engines use the --kv-type for K and V; llama.cpp runs with flash
attention on (what its quantized V needs, and its fastest CPU path).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, env=None):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr[-2000:]}")
    return out.stdout


def tessera(model, a):
    cmd = [os.path.join(ROOT, "build", "tessera"), "bench", "-m", model, "-p", str(a.pp), "-n", str(a.tg),
           "-t", str(a.threads), "-r", "1", "--bw-mib", "0", "--peak-reps", "0", "--kv-type", a.kv_type, "--json",
           "-d", *map(str, a.depths)]
    if a.seqs:
        cmd += ["-b", str(a.seqs), "--batch-prompt", str(a.batch_prompt)]
    res = json.loads(run(cmd))["results"]
    rates = {}
    for r in res:
        if r["n_seqs"] > 1:
            rates[f"{r['n_seqs']} seqs x tg{a.tg} @ d{a.batch_prompt}"] = r["tps_mean"]
        elif r["n_prompt"]:
            rates[f"pp{a.pp}"] = r["tps_mean"]
        else:
            rates[f"tg{a.tg} @ d{r['depth']}"] = r["tps_mean"]
    return rates


def llama(model, a):
    env = dict(os.environ, LD_LIBRARY_PATH=a.llama_bin)
    common = ["-t", str(a.threads), "-fa", "1", "-ctk", a.kv_type, "-ctv", a.kv_type]
    out = run([os.path.join(a.llama_bin, "llama-bench"), "-m", model, "-p", f"0,{a.pp}", "-n", str(a.tg),
               "-d", ",".join(map(str, a.depths)), "-r", "1", "-o", "json", *common], env)
    rates = {}
    for r in json.loads(out):
        if r["n_prompt"] and not r["n_gen"]:
            if r["n_depth"] == a.depths[0]:
                rates[f"pp{a.pp}"] = r["avg_ts"]
        elif r["n_gen"] and not r["n_prompt"]:
            rates[f"tg{a.tg} @ d{r['n_depth']}"] = r["avg_ts"]
    if a.seqs:
        ctx = a.seqs * (a.batch_prompt + a.tg) + 64
        out = run([os.path.join(a.llama_bin, "llama-batched-bench"), "-m", model, "-c", str(ctx),
                   "-b", "2048", "-ub", "512", "-npp", str(a.batch_prompt), "-ntg", str(a.tg),
                   "-npl", str(a.seqs), "--output-format", "jsonl", "-t", str(a.threads), "-fa", "on",
                   "-ctk", a.kv_type, "-ctv", a.kv_type], env)
        for line in out.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                rates[f"{a.seqs} seqs x tg{a.tg} @ d{a.batch_prompt}"] = r["speed_tg"]
    return rates


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--llama-bin", required=True, help="directory of llama-bench and llama-batched-bench")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--pp", type=int, default=512)
    ap.add_argument("--tg", type=int, default=32)
    ap.add_argument("--depths", type=lambda s: [int(x) for x in s.split(",")], default=[0])
    ap.add_argument("--seqs", type=int, default=32, help="batched decode sequences (0 skips)")
    ap.add_argument("--batch-prompt", type=int, default=16)
    ap.add_argument("--kv-type", default="f16", choices=["f32", "f16", "bf16", "q8_0"])
    a = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    table = {}  # (model, test) -> ([tessera], [llama.cpp])
    for rep in range(a.reps):
        for model in a.models:
            engines = [("t", tessera), ("l", llama)]
            for name, fn in engines if rep % 2 == 0 else engines[::-1]:
                for test, tps in fn(model, a).items():
                    table.setdefault((model, test), ([], []))[0 if name == "t" else 1].append(tps)
            print(f"rep {rep + 1}/{a.reps} {os.path.basename(model)} done", file=sys.stderr)
    print(f"load average after: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    print(f"{a.reps} alternating repetitions, median t/s; threads={a.threads}; KV {a.kv_type}; llama.cpp -fa on\n")
    print("| model | test | tessera t/s | llama.cpp t/s | tessera / llama.cpp |")
    print("|---|---|---|---|---|")
    for (model, test), (t, l) in table.items():
        if not t or not l:
            continue
        mt, ml = statistics.median(t), statistics.median(l)
        print(f"| {os.path.basename(model)} | {test} | {mt:.1f} | {ml:.1f} | {mt / ml:.2f} |")


if __name__ == "__main__":
    main()
