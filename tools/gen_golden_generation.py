#!/usr/bin/env python3
"""Golden greedy generations from llama.cpp (through llama-cpp-python).

For each prompt: the prompt's token ids as llama.cpp tokenizes them, up to 64
greedy tokens (argmax of llama.cpp's logits, stopping after an end-of-generation
token), and for the first positions llama.cpp's top-10 logits. tessera's
golden test feeds the same prompt ids through its own model and must produce
the same tokens.

llama.cpp runs with an F32 KV cache and flash attention off, the most exact
reference: this model is sensitive enough to K/V rounding that llama.cpp's F16
cache moves some logits by 0.4 against a float64 reference. tessera's default
KV type is F16 (tensor/kv_type.h); the golden test runs that default against
these F32-cache figures, within its tolerances
(tests/unit/generation_golden_test.cpp).

Usage: python3 tools/gen_golden_generation.py MODEL.gguf OUT.json
Needs: .venv/bin/pip install llama-cpp-python jinja2 (scripts/venv.sh makes .venv). On a CPU
where the wheel's native build faults (the AMX Xeon), LLAMA_CPP_LIB_PATH=DIR points it at a
libllama built with GGML_NATIVE=OFF. A model without a chat template gets the raw prompts only:
tests/golden/generation/gemma3_270m_q4_k_m.json is Gemma 3 270M base (scripts/fetch_model.sh gemma3-270m).
"""
import hashlib
import json
import sys

import jinja2
import numpy as np
import llama_cpp
from llama_cpp import Llama

N_GENERATE = 64
N_LOGIT_POSITIONS = N_GENERATE
TOP = 10
GGML_TYPE_F32 = 0

SYSTEM = "You are a helpful assistant."

CHAT_QUESTIONS = [
    "What is the capital of France?",
    "Write a haiku about autumn leaves.",
    "Explain what a hash table is in two sentences.",
    "List three prime numbers greater than 50.",
    "Translate 'good morning' into Spanish and German.",
    "What is 17 times 23?",
    "Give me a short tip for learning to play the guitar.",
    "Who wrote Pride and Prejudice?",
]

RAW_PROMPTS = [
    "Once upon a time, in a small village by the sea,",
    "The quick brown fox",
    "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
    "Paris is the capital of",
    "1, 2, 3, 4, 5,",
    "The three laws of thermodynamics are",
    "Q: What is the boiling point of water?\nA:",
    "In 1969, the first humans landed on",
    "<html>\n<head>\n<title>",
]

PARAGRAPHS = [
    "The history of computing stretches back to mechanical calculators built in the seventeenth century. "
    "Blaise Pascal designed a machine that could add and subtract, and Gottfried Leibniz extended the idea "
    "to multiplication. Charles Babbage later conceived the Analytical Engine, a general-purpose design with "
    "a mill and a store, and Ada Lovelace wrote what many regard as the first program for it.",
    "Gardening in small spaces rewards patience. Containers need drainage holes, a light soil mix and regular "
    "watering during hot weeks. Herbs such as basil, thyme and parsley thrive on sunny balconies, while ferns "
    "and mint tolerate shade. Rotating crops each season keeps the soil from being exhausted.",
    "The mitochondrion is often called the powerhouse of the cell. It produces most of the cell's supply of "
    "adenosine triphosphate through oxidative phosphorylation. Mitochondria have their own small genome, "
    "inherited in most animals only from the mother, which makes them useful for tracing lineages.",
    "Rivers shape the land they cross. Over thousands of years, water carves valleys, deposits sediment in "
    "floodplains and builds deltas where it meets the sea. Human settlements have always gathered along "
    "rivers, which provide water, food, transport and fertile soil for farming.",
    "A good recipe for bread needs only flour, water, salt and yeast. Mix the ingredients, knead the dough "
    "until it is smooth and elastic, let it rise until doubled, shape it, let it rise again and bake it in a "
    "hot oven until the crust is deep brown and the loaf sounds hollow when tapped.",
]


def long_prompt(seed, n_paragraphs):
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(PARAGRAPHS))
    parts = [PARAGRAPHS[order[i % len(order)]] for i in range(n_paragraphs)]
    return "\n\n".join(parts)


def chat(template, user, system=True):
    messages = ([{"role": "system", "content": SYSTEM}] if system else []) + [{"role": "user", "content": user}]
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    return env.from_string(template).render(messages=messages, add_generation_prompt=True,
                                            bos_token="<|im_start|>", eos_token="<|im_end|>")


def build_prompts(template):
    """The chat cases need the model's template; a base model without one
    (Gemma 3 270M) gets the raw ones only."""
    cases = []
    if template:
        for i, q in enumerate(CHAT_QUESTIONS):
            cases.append((f"chat_{i}", chat(template, q, system=(i % 2 == 0))))
    for i, p in enumerate(RAW_PROMPTS):
        cases.append((f"raw_{i}", p))
    cases.append(("long_raw_0", long_prompt(1, 17) + "\n\nIn summary,"))
    if template:
        cases.append(("long_chat_0", chat(template, long_prompt(2, 17) + "\n\nSummarize the text above in one sentence.")))
    cases.append(("long_raw_1", long_prompt(3, 19) + "\n\nThe next paragraph is about"))
    return cases


def top_logits(row):
    idx = np.argsort(-row, kind="stable")[:TOP]
    return [[int(i), float(row[i])] for i in idx]


def run_case(llm, prompt):
    ids = llm.tokenize(prompt.encode("utf-8"), add_bos=llm.metadata.get("tokenizer.ggml.add_bos_token") == "true",
                       special=True)
    llm.reset()
    llm.eval(ids)
    out, tops = [], []
    for step in range(N_GENERATE):
        row = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
        tok = int(np.argmax(row))
        if step < N_LOGIT_POSITIONS:
            tops.append(top_logits(row))
        out.append(tok)
        if llm.token_eos() == tok or tok in EOG:
            break
        llm.eval([tok])
    return ids, out, tops


EOG = set()


def main():
    model_path, out_path = sys.argv[1], sys.argv[2]
    llm = Llama(model_path=model_path, n_ctx=4096, n_batch=512, n_threads=2, logits_all=True, verbose=False,
                flash_attn=False, type_k=GGML_TYPE_F32, type_v=GGML_TYPE_F32)
    template = llm.metadata.get("tokenizer.chat_template")
    # End-of-generation ids as llama.cpp's vocab marks them.
    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    EOG.update(t for t in range(llm.n_vocab()) if llama_cpp.llama_vocab_is_eog(vocab, t))
    sha = hashlib.sha256(open(model_path, "rb").read()).hexdigest()
    cases = []
    for name, prompt in build_prompts(template):
        ids, tokens, tops = run_case(llm, prompt)
        print(f"{name}: {len(ids)} prompt tokens, {len(tokens)} generated", file=sys.stderr)
        cases.append({"name": name, "prompt": prompt, "prompt_tokens": ids, "tokens": tokens, "top_logits": tops})
    doc = {"generator": "tools/gen_golden_generation.py", "reference": f"llama-cpp-python {llama_cpp.__version__} (F32 KV cache, flash attention off)",
           "model_sha256": sha, "n_generate": N_GENERATE, "eog_ids": sorted(EOG), "cases": cases}
    with open(out_path, "w") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
