#!/usr/bin/env python3
"""Side-by-side prompt-processing and decode speed: tessera vs llama.cpp.

Both engines run the same GGUF file with the same thread count in one run,
alternating, and the medians and their ratio are printed as a Markdown table
(paste into docs/BENCHMARKS.md). llama.cpp runs through llama-cpp-python with
its defaults (F16 KV cache); decode is greedy for both.

Usage: python3 bench/compare_llama_cpp.py MODEL.gguf [--threads 2] [--prompt-tokens 512]
       [--gen-tokens 128] [--reps 3]
Needs: llama-cpp-python in .venv (.venv/bin/pip install llama-cpp-python); build/tessera built.
"""
import argparse
import re
import statistics
import subprocess
import time

import numpy as np
import llama_cpp
from llama_cpp import Llama

ROOT = __file__.rsplit("/bench/", 1)[0]
WORDS = ("the quick brown fox jumps over a lazy dog while seven wise owls watch "
         "from an old oak tree near the quiet river bank at dawn").split()


def make_prompt(llm, n_tokens):
    text, i = "", 0
    while len(llm.tokenize(text.encode(), add_bos=False)) < n_tokens:
        text += WORDS[i % len(WORDS)] + " "
        i += 1
    ids = llm.tokenize(text.encode(), add_bos=False)[:n_tokens]
    return llm.detokenize(ids).decode(), ids


def run_tessera(model, prompt, n_gen, threads):
    r = subprocess.run([f"{ROOT}/build/tessera", "run", "-m", model, "-p", prompt, "-n", str(n_gen), "--temp", "0",
                        "--ignore-eos", "-t", str(threads), "--no-parse-special"],
                       capture_output=True, text=True, check=True)
    pp = float(re.search(r"prompt: \d+ tokens in [\d.]+ s \(([\d.]+) t/s\)", r.stderr).group(1))
    tg = float(re.search(r"generation: \d+ tokens in [\d.]+ s \(([\d.]+) t/s\)", r.stderr).group(1))
    n_prompt = int(re.search(r"prompt: (\d+) tokens", r.stderr).group(1))
    return pp, tg, n_prompt


def last_argmax(llm):
    # llm.scores only has rows when logits_all is set (0.3.x); read llama.cpp's
    # own buffer for the last evaluated token instead.
    row = llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1)
    return int(np.argmax(np.ctypeslib.as_array(row, shape=(llm.n_vocab(),))))


def run_llama(llm, ids, n_gen):
    llm.reset()
    t0 = time.perf_counter()
    llm.eval(ids)
    t1 = time.perf_counter()
    tok = last_argmax(llm)
    t2 = time.perf_counter()
    for _ in range(n_gen - 1):
        llm.eval([tok])
        tok = last_argmax(llm)
    t3 = time.perf_counter()
    return len(ids) / (t1 - t0), (n_gen - 1) / (t3 - t2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompt-tokens", type=int, default=512)
    ap.add_argument("--gen-tokens", type=int, default=128)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    llm = Llama(model_path=a.model, n_ctx=a.prompt_tokens + a.gen_tokens + 16, n_batch=512,
                n_threads=a.threads, n_threads_batch=a.threads, verbose=False)
    prompt, ids = make_prompt(llm, a.prompt_tokens)
    ts, ls = [], []
    for _ in range(a.reps):
        ts.append(run_tessera(a.model, prompt, a.gen_tokens, a.threads))
        ls.append(run_llama(llm, ids, a.gen_tokens))
    t_pp, t_tg = statistics.median(t[0] for t in ts), statistics.median(t[1] for t in ts)
    l_pp, l_tg = statistics.median(l[0] for l in ls), statistics.median(l[1] for l in ls)
    n_prompt = ts[0][2]
    print(f"| test | tessera t/s | llama.cpp t/s | ratio |")
    print(f"|---|---|---|---|")
    print(f"| prompt {n_prompt} tokens | {t_pp:.1f} | {l_pp:.1f} | {t_pp / l_pp:.2f} |")
    print(f"| decode {a.gen_tokens} tokens | {t_tg:.1f} | {l_tg:.1f} | {t_tg / l_tg:.2f} |")
    print(f"\n{a.reps} repetitions each, medians; threads={a.threads}; model {a.model.rsplit('/', 1)[-1]}")


if __name__ == "__main__":
    main()
