#!/usr/bin/env python3
"""Golden token masks for tessera's grammar engine, from llguidance (PyPI).

For each GBNF grammar, regex and JSON Schema below and a few seeds, walks random allowed tokens on the
model's vocabulary (as llama.cpp reads it, through llama-cpp-python) and
records every step's allowed-token set. The vocabulary is read from the GGUF
with the `gguf` package: byte-level BPE texts decoded to bytes, control tokens
marked special (llguidance's 0xFF prefix), so they are never allowed. tests/unit/grammar_golden_test.cpp
replays the same tokens and compares tessera's masks.

A mask is stored compactly: its size, a 64-bit FNV-1a hash of the sorted ids
(each as 4 little-endian bytes), and the ids as [first, last] ranges when
there are few of them (for readable failures).

    .venv/bin/python tools/gen_grammar_golden.py \
        --model models/SmolLM2-135M-Instruct.Q4_1.gguf \
        --out tests/golden/grammar/smollm2_gbnf_masks.jsonl
    .venv/bin/python tools/gen_grammar_golden.py --steps 64 \
        --model models/SmolLM2-135M-Instruct.Q4_1.gguf \
        --corpus tests/golden/grammar/schema_corpus.json \
        --out tests/golden/grammar/smollm2_schema_corpus_masks.jsonl

(llguidance==1.9.1, in a venv of its own.)
"""
import argparse
import json
import random
import struct

import gguf
import llguidance

# Grammars whose meaning is the same under llguidance's GBNF import and a plain
# context-free reading (no lexer-level ambiguity; see the test for cases left out).
GRAMMARS = {
    "json": r'''root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null")
object ::= "{" ws ( string ":" ws value ( "," ws string ":" ws value )* )? "}" ws
array  ::= "[" ws ( value ( "," ws value )* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws     ::= | " " | "\n" [ \t]{0,20}
''',
    "list": r'''root ::= item+
item ::= "- " [^\n]+ "\n"
''',
    "arithmetic": r'''root  ::= expr
expr  ::= term ([-+*/] term)*
term  ::= [0-9]+ | "(" expr ")"
''',
    "choice": r'''root ::= "The answer is " ("yes" | "no" | "maybe") "." " Because"? [a-z ]{0,40}
''',
    # Literal characters: llguidance 1.9's GBNF import misreads \u00e0 as \ue0.
    "unicode": r'''root ::= ([à-ÿ] | [一-鿿] | [a-z] | " ")+
''',
    "bounded": r'''root ::= "id-" [0-9]{3} "-" [A-Z]{2,4} ("," [a-f0-9]{8})* "."
''',
    "nested": r'''root ::= "(" inner ")"
inner ::= ( "x" | "(" inner ")" | " " )*
''',
}

# Regular expressions (whole-string match, as guided_regex), compiled by
# llguidance's "regex" grammar kind and by tessera's compile_regex. The
# oracle's \d \w \s are Unicode classes (Rust's regex crate), ECMAScript's
# (tessera's) ASCII ones: a documented difference, so these spell classes out.
REGEXES = {
    "phone": r"\([0-9]{3}\) [0-9]{3}-[0-9]{4}",
    "words": r"[A-Z][a-z]+( [a-z]+){0,6}\.",
    "ident_list": r"(?:[a-z_][a-z0-9_]*)(?:, [a-z_][a-zA-Z0-9_]*)*",
    "decimal": r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?",
    "not_quote": r"[^\"\n]{1,30}",
}

# JSON Schemas, compiled by llguidance with compact separators and no
# whitespace (tessera's default), every object closed (additionalProperties
# false, which tessera assumes when it is absent).
SCHEMAS = {
    "person": {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                                                "tags": {"type": "array", "items": {"type": "string"}}},
               "required": ["name", "age", "tags"], "additionalProperties": False},
    "enum_bool": {"type": "object", "properties": {"color": {"enum": ["red", "green", "blue"]},
                                                   "ok": {"type": "boolean"}, "note": {"type": ["string", "null"]}},
                  "required": ["color", "ok", "note"], "additionalProperties": False},
    "list_of_numbers": {"type": "array", "items": {"type": "number"}, "minItems": 1},
    "patterns": {"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{2,4}$"},
                                                  "note": {"type": "string", "pattern": "ok"},
                                                  "id": {"type": "string", "format": "uuid"}},
                 "required": ["code", "note", "id"], "additionalProperties": False},
}
COMPACT = {"whitespace_flexible": False, "item_separator": ",", "key_separator": ":"}


def fnv1a64(ids):
    h = 0xCBF29CE484222325
    for b in b"".join(struct.pack("<I", i) for i in ids):
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def ranges(ids):
    out = []
    for i in ids:
        if out and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return out


def allowed_ids(mask_bytes, n_vocab):
    ids = []
    for w in range(0, len(mask_bytes), 4):
        word = int.from_bytes(mask_bytes[w:w + 4], "little")
        while word:
            low = word & -word
            i = w * 8 + low.bit_length() - 1
            if i < n_vocab:
                ids.append(i)
            word ^= low
    return ids


def byte_decoder():
    # GPT-2's byte-level alphabet: printable bytes stand for themselves, the
    # rest are shifted to U+0100 and up.
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars, n = {}, 0
    for b in range(256):
        if b in keep:
            chars[chr(b)] = b
        else:
            chars[chr(256 + n)] = b
            n += 1
    return chars


class GgufVocab:
    """What llguidance.TokenizerWrapper reads: token bytes, EOS, a tokenize call."""

    def __init__(self, path):
        r = gguf.GGUFReader(path)

        def field(name):
            f = r.fields[name]
            return [f.parts[i] for i in f.data]

        texts = [bytes(p).decode("utf-8") for p in field("tokenizer.ggml.tokens")]
        types = [int(p[0]) for p in field("tokenizer.ggml.token_type")]
        dec = byte_decoder()
        self.tokens = []
        for text, ty in zip(texts, types):
            if ty == 3:  # control
                self.tokens.append(b"\xff" + text.encode())
            else:
                self.tokens.append(bytes(dec[c] for c in text))
        self.eos_token_id = int(field("tokenizer.ggml.eos_token_id")[0][0])
        self.bos_token_id = int(field("tokenizer.ggml.bos_token_id")[0][0])
        self.by_bytes = {t: i for i, t in enumerate(self.tokens)}

    def __call__(self, s):
        # Greedy longest match: only used by llguidance for prompts, not masks.
        data = s if isinstance(s, bytes) else s.encode()
        out, i = [], 0
        while i < len(data):
            for j in range(min(len(data), i + 64), i, -1):
                if data[i:j] in self.by_bytes:
                    out.append(self.by_bytes[data[i:j]])
                    i = j
                    break
            else:
                i += 1
        return out


STRUCTURAL = b'"]},'


def walk(tok, grammar, seed, steps, n_vocab, eog, structural=None):
    """One random walk: every step's mask entry and the token taken.

    Plain walks pick uniformly among the allowed tokens. Walks given the
    `structural` token ids (the schema corpus's: tokens carrying a quote,
    bracket, brace or comma) pick among those half the time, so they leave strings
    and close objects instead of wandering inside the first string, and take
    EOS half the time it is allowed: most end with the grammar accepting.
    """
    rng = random.Random(seed)
    m = llguidance.LLMatcher(tok, grammar, log_level=0)
    assert not m.is_error(), m.get_error()
    tokens, masks = [], []
    for _ in range(steps):
        ids = allowed_ids(m.compute_bitmask(), n_vocab)
        entry = {"n": len(ids), "h": f"{fnv1a64(ids):016x}"}
        r = ranges(ids)
        if len(r) <= 16:
            entry["r"] = r
        masks.append(entry)
        choices = [i for i in ids if i not in eog]
        if not choices:
            break
        if structural is not None:
            if len(choices) < len(ids) and rng.random() < 0.5:
                break  # the walk takes EOS
            marked = [i for i in choices if i in structural]
            if marked and rng.random() < 0.5:
                choices = marked
        t = rng.choice(choices)
        assert m.consume_token(t), m.get_error()
        tokens.append(t)
    return tokens, masks


# tessera's `format` regexes (src/grammar/json_schema.cpp, format_regex),
# given to the oracle as `pattern`s: JSON Schema leaves each format's exact
# language to the implementation, llguidance's differ (and it has no "uri"),
# so the walks compare the masks of one language. \d is spelled [0-9] and
# \s as ECMAScript's class, since the oracle's are Unicode (Rust's).
_ES_SPACE = "\t-\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
FORMATS = {
    "date": r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$",
    "time": r"^([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$",
    "date-time": r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?"
                 r"(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$",
    "uuid": r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    "email": r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?"
             r"(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$",
    "uri": r'^[A-Za-z][A-Za-z0-9+.-]*:[^\s"<>\\^`{|}]+$',
}


def formats_as_patterns(schema):
    if isinstance(schema, list):
        return [formats_as_patterns(x) for x in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: formats_as_patterns(v) for k, v in schema.items()}
    if isinstance(out.get("format"), str):
        out["pattern"] = FORMATS[out.pop("format")].replace("\\d", "[0-9]").replace("\\s", _ES_SPACE)
    return out


def oracle_schema(schema):
    """The schema as llguidance gets it: compact separators, no whitespace,
    formats as tessera's patterns."""
    schema = formats_as_patterns(schema)
    return llguidance.grammar_from("json_schema", json.dumps(dict(schema, **{"x-guidance": COMPACT})))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--corpus", help="walk this schema corpus (tools/gen_schema_corpus.py) instead of the "
                                     "built-in cases, with structured walks")
    args = ap.parse_args()

    vocab = GgufVocab(args.model)
    n_vocab = len(vocab.tokens)
    eog = [vocab.eos_token_id]
    tok = llguidance.LLTokenizer(llguidance.TokenizerWrapper(vocab), eos_token=eog)

    structural = None
    if args.corpus:
        structural = {i for i, t in enumerate(vocab.tokens) if any(b in STRUCTURAL for b in t)}
        with open(args.corpus) as f:
            schemas = json.load(f)["schemas"]
        cases = [(name, "schema", json.dumps(schema), oracle_schema(schema)) for name, schema in schemas.items()]
    else:
        cases = [(name, "gbnf", gbnf, llguidance.grammar_from("gbnf", gbnf)) for name, gbnf in GRAMMARS.items()]
        cases += [(name, "regex", rx, llguidance.grammar_from("regex", rx)) for name, rx in REGEXES.items()]
        cases += [(name, "schema", json.dumps(schema), oracle_schema(schema)) for name, schema in SCHEMAS.items()]
    with open(args.out, "w") as f:
        f.write(json.dumps({"meta": {"oracle": f"llguidance {llguidance.__version__}", "model": args.model.split("/")[-1],
                                     "n_vocab": n_vocab, "eog": eog}}) + "\n")
        for name, kind, text, grammar in cases:
            for seed in range(args.seeds):
                tokens, masks = walk(tok, grammar, seed, args.steps, n_vocab, eog, structural)
                f.write(json.dumps({"name": name, "seed": seed, kind: text, "tokens": tokens, "masks": masks}) + "\n")
                print(f"{name} seed {seed}: {len(masks)} masks")


if __name__ == "__main__":
    main()
