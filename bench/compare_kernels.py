#!/usr/bin/env python3
"""Kernel-level side by side: `tessera bench` vs llama.cpp (llama-cpp-python's
low-level batch API), alternating one repetition of each so both see the same
machine load, after one untimed repetition of each (tessera bench runs its own
in every process). Prints a Markdown table of means and the tessera/llama.cpp
ratio; for prompts and batched steps also the share of the machine's int8
multiply-add peak tessera's matmuls take (`tessera bench`'s compute column)
and the share a speed of twice llama.cpp's would take.

Tests (each optional):
  pp   prompt processing of --pp tokens (random ids), one batch
  tg   single-stream decode of --tg tokens after an empty context
  batch  --seqs sequences, each prefilled with --batch-prompt tokens
       (untimed), then --tg steps decoding one token of every sequence
  depth  single-stream decode of --tg tokens after --depth tokens of context

llama.cpp runs with its default F16 KV cache; flash attention follows --fa
(default on). tessera's KV cache type is its default unless --kv-type is
given (passed to `tessera bench --kv-type`). Both engines get --threads threads.

With --write-doc NAME the table, the command and the date also go into
docs/BENCHMARKS.md between the markers <!-- compare_kernels NAME begin -->
and <!-- compare_kernels NAME end --> (replaced if present, else inserted
before the first section).

Usage: python3 bench/compare_kernels.py MODEL.gguf [MODEL2.gguf ...]
       [--tests pp,tg,batch,depth] [--reps 3] [--threads 2] [--pp 512] [--tg 128]
       [--seqs 32] [--batch-prompt 128] [--depth 4096] [--fa on|off]
       [--kv-type f32|f16|bf16|q8_0] [--write-doc NAME]
Needs: build/tessera, llama-cpp-python in .venv (.venv/bin/pip install llama-cpp-python).
"""
import argparse
import json
import os
import random
import re
import shlex
import statistics
import subprocess
import sys
import time

import llama_cpp as L

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "BENCHMARKS.md")


def write_doc(name, lines):
    """Puts lines between NAME's markers in docs/BENCHMARKS.md."""
    begin, end = f"<!-- compare_kernels {name} begin -->", f"<!-- compare_kernels {name} end -->"
    block = "\n".join([begin, *lines, end])
    with open(DOC) as f:
        doc = f.read()
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if pattern.search(doc):
        doc = pattern.sub(lambda _: block, doc, count=1)
    else:
        at = doc.find("\n## ")
        at = len(doc) if at < 0 else at + 1
        doc = doc[:at] + block + "\n\n" + doc[at:]
    with open(DOC, "w") as f:
        f.write(doc)


class LlamaCpp:
    """One llama.cpp context sized for the test; decode through llama_batch."""

    def __init__(self, model, n_ctx, n_seq, threads, fa):
        cp = L.llama_context_default_params()
        cp.n_ctx = n_ctx
        cp.n_batch = 4096
        cp.n_ubatch = 512
        cp.n_seq_max = n_seq
        cp.n_threads = threads
        cp.n_threads_batch = threads
        cp.flash_attn_type = L.LLAMA_FLASH_ATTN_TYPE_ENABLED if fa else L.LLAMA_FLASH_ATTN_TYPE_DISABLED
        self.ctx = L.llama_init_from_model(model, cp)
        assert self.ctx, "llama.cpp context creation failed"
        self.mem = L.llama_get_memory(self.ctx)
        self.batch = L.llama_batch_init(4096, 0, 1)

    def close(self):
        L.llama_batch_free(self.batch)
        L.llama_free(self.ctx)

    def decode(self, entries):
        """entries: (token, pos, seq, want_logits) tuples, one batch."""
        b = self.batch
        b.n_tokens = len(entries)
        for i, (tok, pos, seq, want) in enumerate(entries):
            b.token[i], b.pos[i], b.n_seq_id[i], b.logits[i] = tok, pos, 1, want
            b.seq_id[i][0] = seq
        assert L.llama_decode(self.ctx, b) == 0, "llama_decode failed"

    def prefill(self, tokens, seq=0, pos0=0):
        for s in range(0, len(tokens), 4096):
            chunk = tokens[s:s + 4096]
            self.decode([(t, pos0 + s + i, seq, i == len(chunk) - 1) for i, t in enumerate(chunk)])


def tessera(model, args):
    r = subprocess.run([f"{ROOT}/build/tessera", "bench", "-m", model, "-r", "1", "--json", "--bw-mib", "0"] + args,
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["results"][0]


def run_test(test, model_path, lmodel, a, vocab):
    rnd = random.Random(5)
    toks = lambda n: [rnd.randrange(vocab) for _ in range(n)]  # noqa: E731
    T = str(a.threads)
    if test == "pp":
        targs = ["-p", str(a.pp), "-b", "0", "--no-single", "-t", T]
        lc = LlamaCpp(lmodel, a.pp + 16, 1, a.threads, a.fa)
        prompt = toks(a.pp)

        def lrun():
            L.llama_memory_clear(lc.mem, True)
            t0 = time.perf_counter()
            lc.prefill(prompt)
            return a.pp / (time.perf_counter() - t0)
        label = f"pp{a.pp}"
    elif test in ("tg", "depth"):
        depth = a.depth if test == "depth" else 0
        targs = ["-p", "0", "-n", str(a.tg), "-b", "0", "-d", str(depth), "-t", T]
        lc = LlamaCpp(lmodel, depth + a.tg + 16, 1, a.threads, a.fa)
        if depth:
            lc.prefill(toks(depth))
        steps = toks(a.tg)

        def lrun():
            L.llama_memory_seq_rm(lc.mem, 0, depth, -1)
            t0 = time.perf_counter()
            for i, t in enumerate(steps):
                lc.decode([(t, depth + i, 0, True)])
            return a.tg / (time.perf_counter() - t0)
        label = f"tg{a.tg}" + (f" @ d{depth}" if depth else "")
    else:
        targs = ["-p", "0", "-n", str(a.tg), "-b", str(a.seqs), "--batch-prompt", str(a.batch_prompt),
                 "--no-single", "-t", T]
        lc = LlamaCpp(lmodel, a.seqs * (a.batch_prompt + a.tg + 16), a.seqs, a.threads, a.fa)
        for s in range(a.seqs):
            lc.prefill(toks(a.batch_prompt), seq=s)
        steps = toks(a.seqs)

        def lrun():
            for s in range(a.seqs):
                L.llama_memory_seq_rm(lc.mem, s, a.batch_prompt, -1)
            t0 = time.perf_counter()
            for i in range(a.tg):
                lc.decode([(steps[s], a.batch_prompt + i, s, True) for s in range(a.seqs)])
            return a.seqs * a.tg / (time.perf_counter() - t0)
        label = f"{a.seqs} seqs x tg{a.tg} @ d{a.batch_prompt}"
    ts, cs, ls = [], [], []
    lrun()  # untimed, as tessera bench warms up each test with one untimed repetition
    for _ in range(a.reps):
        res = tessera(model_path, targs + a.kv_args)
        ts.append(res["tps_mean"])
        if "compute" in res:
            cs.append(res["compute"])
        ls.append(lrun())
    lc.close()
    return label, ts, cs, ls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--tests", default="pp,tg")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--pp", type=int, default=512)
    ap.add_argument("--tg", type=int, default=128)
    ap.add_argument("--seqs", type=int, default=32)
    ap.add_argument("--batch-prompt", type=int, default=128)
    ap.add_argument("--depth", type=int, default=4096)
    ap.add_argument("--fa", choices=["on", "off"], default="on")
    ap.add_argument("--kv-type", choices=["f32", "f16", "bf16", "q8_0"], help="tessera's KV cache type")
    ap.add_argument("--write-doc", metavar="NAME", help="also write the table into docs/BENCHMARKS.md")
    a = ap.parse_args()
    a.fa = a.fa == "on"
    a.kv_args = ["--kv-type", a.kv_type] if a.kv_type else []
    L.llama_backend_init()
    quiet = L.llama_log_callback(lambda *_: None)  # kept alive: llama.cpp calls it later
    L.llama_log_set(quiet, None)
    lines = ["| model | test | tessera t/s | llama.cpp t/s | ratio | tessera int8 peak share | 2x llama.cpp needs |",
             "|---|---|---|---|---|---|---|"]
    print("\n".join(lines))
    for path in a.models:
        mp = L.llama_model_default_params()
        lmodel = L.llama_model_load_from_file(path.encode(), mp)
        vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(lmodel))
        for test in a.tests.split(","):
            label, ts, cs, ls = run_test(test, path, lmodel, a, vocab)
            t, lm = statistics.mean(ts), statistics.mean(ls)
            # A share of the peak scales with speed: twice llama.cpp's takes
            # tessera's share times 2 lm / t (prompts and batched steps).
            share = need = ""
            if cs:
                c = statistics.mean(cs)
                share, need = f"{c:.2f}", f"{c * 2 * lm / t:.2f}"
            lines.append(f"| {os.path.basename(path)} | {label} | {t:.1f} ± {statistics.pstdev(ts):.1f} "
                         f"| {lm:.1f} ± {statistics.pstdev(ls):.1f} | {t / lm:.2f} | {share} | {need} |")
            print(lines[-1], flush=True)
        L.llama_model_free(lmodel)
    footer = (f"{a.reps} alternating repetitions, mean ± stddev; threads={a.threads}; "
              "int8 peak share: tessera's matmul multiply-adds per second over `tessera bench`'s int8 peak "
              "(prompts and batched steps; 1.00 would leave no time for anything else); "
              f"llama.cpp flash attention {'on' if a.fa else 'off'}, F16 KV cache; "
              f"tessera KV cache {a.kv_type or 'default'}")
    print("\n" + footer)
    if a.write_doc:
        command = "python3 bench/compare_kernels.py " + shlex.join(sys.argv[1:])
        write_doc(a.write_doc, ["", *lines, "", f"{footer}. {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
                                f"`{command}`", ""])

if __name__ == "__main__":
    main()
