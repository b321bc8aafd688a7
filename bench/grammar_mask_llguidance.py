#!/usr/bin/env python3
"""llguidance's token mask time on the walks bench/grammar_mask_bench replays.

Reads the same golden corpus (tests/golden/grammar/*.jsonl), compiles each
grammar with llguidance as tools/gen_grammar_golden.py did when it made the
corpus, replays the recorded tokens and times every compute_bitmask call
(one matcher per walk, as one per sequence). Two passes like the C++ bench:
"cold" then "warm" (llguidance caches per grammar object; the second pass
reuses the compiled grammars).

    .venv/bin/python bench/grammar_mask_llguidance.py \
        --model models/SmolLM2-135M-Instruct.Q4_1.gguf \
        --golden tests/golden/grammar/smollm2_gbnf_masks.jsonl
"""
import argparse
import json
import os
import sys
import time

import llguidance

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from gen_grammar_golden import GgufVocab, oracle_schema  # noqa: E402


def summary(name, us):
    us = sorted(us)
    n = len(us)
    print(f"{name:<28} masks {n:5d}  median {us[n // 2]:9.1f} us  p99 {us[min(n - 1, n * 99 // 100)]:9.1f} us  "
          f"mean {sum(us) / n:9.1f} us  max {us[-1]:9.1f} us")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--golden", required=True)
    args = ap.parse_args()

    vocab = GgufVocab(args.model)
    with open(args.golden) as f:
        meta = json.loads(f.readline())["meta"]
        walks = [json.loads(line) for line in f]
    tok = llguidance.LLTokenizer(llguidance.TokenizerWrapper(vocab), eos_token=meta["eog"])
    grammars = {}
    for w in walks:
        if "schema" in w:
            key = w["schema"]
            if key not in grammars:
                grammars[key] = oracle_schema(json.loads(key))
        else:
            kind = "regex" if "regex" in w else "gbnf"
            key = kind + ":" + w[kind]
            if key not in grammars:
                grammars[key] = llguidance.grammar_from(kind, w[kind])
        w["key"] = key

    for pass_name in ("cold", "warm"):
        times = []
        for w in walks:
            m = llguidance.LLMatcher(tok, grammars[w["key"]], log_level=0)
            assert not m.is_error(), m.get_error()
            for step in range(len(w["masks"])):
                t0 = time.perf_counter()
                m.compute_bitmask()
                times.append((time.perf_counter() - t0) * 1e6)
                if step >= len(w["tokens"]):
                    break
                assert m.consume_token(w["tokens"][step]), m.get_error()
        summary(f"llguidance {pass_name}", times)


if __name__ == "__main__":
    main()
