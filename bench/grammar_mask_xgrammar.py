#!/usr/bin/env python3
"""xgrammar's token mask time on the walks bench/grammar_mask_bench replays.

The sibling of bench/grammar_mask_llguidance.py: reads a golden corpus
(tests/golden/grammar/*.jsonl), compiles each grammar with xgrammar (JSON
Schemas compact, formats as tessera's regexes, as the golden's oracle got
them; GBNF and regexes as written), replays the recorded tokens and times
every fill_next_token_bitmask call, one matcher per walk. Compile time is
not in the mask times (xgrammar compiles ahead, like build_all). As a second
opinion it also counts the masks equal to the golden's (llguidance's); a
mismatch is reported, not fatal: the oracles differ in places (forced
tokens, escapes).

xgrammar 0.1.27 imports torch; it ran in a venv whose site-packages path
also reaches a torch 2.6 CPU install:

    python bench/grammar_mask_xgrammar.py --model models/SmolLM2-135M-Instruct.Q4_1.gguf \
        --golden tests/golden/grammar/smollm2_schema_corpus_masks.jsonl
"""
import argparse
import json
import os
import sys
import time

import torch
import xgrammar

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from gen_grammar_golden import GgufVocab, fnv1a64, formats_as_patterns  # noqa: E402
from grammar_mask_llguidance import summary  # noqa: E402


def compile_walk(compiler, w):
    if "schema" in w:
        return compiler.compile_json_schema(json.dumps(formats_as_patterns(json.loads(w["schema"]))),
                                            any_whitespace=False, separators=(",", ":"), strict_mode=True)
    if "regex" in w:
        return compiler.compile_regex(w["regex"])
    return compiler.compile_grammar(w["gbnf"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--golden", required=True)
    args = ap.parse_args()

    vocab = GgufVocab(args.model)
    with open(args.golden) as f:
        meta = json.loads(f.readline())["meta"]
        walks = [json.loads(line) for line in f]
    # Control tokens as empty strings: xgrammar treats those as special, never allowed.
    encoded = [b"" if t.startswith(b"\xff") else t for t in vocab.tokens]
    info = xgrammar.TokenizerInfo(encoded, xgrammar.VocabType.RAW, vocab_size=len(encoded),
                                  stop_token_ids=meta["eog"])
    compiler = xgrammar.GrammarCompiler(info, max_threads=1)
    n = len(encoded)
    compiled, failed = {}, set()
    t0 = time.perf_counter()
    for w in walks:
        key = w.get("schema") or w.get("regex") or w.get("gbnf")
        if key in compiled or key in failed:
            continue
        try:
            compiled[key] = compile_walk(compiler, w)
        except RuntimeError as e:
            failed.add(key)
            print(f"xgrammar refuses {w['name']}: {str(e)[:120]}")
    print(f"xgrammar compile: {len(compiled)} grammars in {(time.perf_counter() - t0) * 1e3:.0f} ms, "
          f"{len(failed)} refused")

    bitmask = xgrammar.allocate_token_bitmask(1, n)
    ids_all = torch.arange(n)
    for pass_name in ("first", "second"):
        times, equal, compared = [], 0, 0
        for w in walks:
            key = w.get("schema") or w.get("regex") or w.get("gbnf")
            if key not in compiled:
                continue
            m = xgrammar.GrammarMatcher(compiled[key])
            for step, want in enumerate(w["masks"]):
                t0 = time.perf_counter()
                m.fill_next_token_bitmask(bitmask)
                times.append((time.perf_counter() - t0) * 1e6)
                if pass_name == "first":
                    bits = (bitmask[0].view(-1, 1) >> torch.arange(32, dtype=torch.int32)) & 1
                    ids = ids_all[bits.view(-1)[:n].bool()].tolist()
                    compared += 1
                    equal += len(ids) == want["n"] and f"{fnv1a64(ids):016x}" == want["h"]
                if step >= len(w["tokens"]) or not m.accept_token(w["tokens"][step]):
                    break
        summary(f"xgrammar {pass_name}", times)
        if compared:
            print(f"xgrammar masks equal to the golden's: {equal} of {compared}")


if __name__ == "__main__":
    main()
