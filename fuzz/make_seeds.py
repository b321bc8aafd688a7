#!/usr/bin/env python3
# Writes the fuzzers' seed corpora (fuzz/corpus/<target>/): a few tiny GGUF
# files (model + vocab-only, both tokenizer kinds) and short valid and
# near-valid inputs for the tokenizer, template and request fuzzers.
"""Usage: python3 fuzz/make_seeds.py   (rewrites fuzz/corpus/*/seed_*)"""
import json
import pathlib

import numpy as np
import gguf

CORPUS = pathlib.Path(__file__).resolve().parent / "corpus"
CHATML = ("{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}"
          "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def gpt2_vocab(w):
    # Byte-level tokens spell a space as "\u0120" (GPT-2's byte-to-unicode map).
    tokens = [chr(c) for c in range(ord("a"), ord("p"))] + ["ab", "abc", "\u0120", "\u0120a", "<|im_start|>",
                                                          "<|im_end|>"]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    w.add_token_list(tokens)
    w.add_token_types([1] * (len(tokens) - 2) + [3, 3])
    w.add_token_merges(["a b", "ab c", "\u0120 a"])
    w.add_bos_token_id(len(tokens) - 2)
    w.add_eos_token_id(len(tokens) - 1)
    w.add_chat_template(CHATML)
    return len(tokens)


def spm_vocab(w):
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(0, 256, 51)] + ["\u2581", "\u2581a", "a", "b"]
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * 3 + [-10.0] * 6 + [-1.0, -0.5, -2.0, -3.0])
    w.add_token_types([2, 3, 3] + [6] * 6 + [1] * 4)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(True)
    return len(tokens)


def tiny_model(path, qtype, vocab_fn):
    n_embd, n_ff, n_head, n_kv = 32, 64, 2, 1
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_context_length(64)
    w.add_embedding_length(n_embd)
    w.add_block_count(1)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    n_vocab = vocab_fn(w)
    hd = n_embd // n_head
    rng = np.random.default_rng(0)
    shapes = {"token_embd.weight": (n_vocab, n_embd), "blk.0.attn_q.weight": (n_embd, n_embd),
              "blk.0.attn_k.weight": (n_kv * hd, n_embd), "blk.0.attn_v.weight": (n_kv * hd, n_embd),
              "blk.0.attn_output.weight": (n_embd, n_embd), "blk.0.ffn_gate.weight": (n_ff, n_embd),
              "blk.0.ffn_up.weight": (n_ff, n_embd), "blk.0.ffn_down.weight": (n_embd, n_ff)}
    for name in ("blk.0.attn_norm.weight", "blk.0.ffn_norm.weight", "output_norm.weight"):
        w.add_tensor(name, np.ones(n_embd, dtype=np.float32))
    for name, shape in shapes.items():
        data = rng.standard_normal(shape).astype(np.float32)
        if qtype == "F16":
            w.add_tensor(name, data.astype(np.float16))
        else:
            w.add_tensor(name, gguf.quants.quantize(data, gguf.GGMLQuantizationType.Q8_0),
                         raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def tiny_moe_model(path):
    """A one-layer qwen2moe: router, 3-D expert tensors, shared expert and its gate."""
    n_embd, n_ff, n_head, n_expert = 32, 32, 2, 4
    w = gguf.GGUFWriter(str(path), "qwen2moe")
    w.add_context_length(64)
    w.add_embedding_length(n_embd)
    w.add_block_count(1)
    w.add_feed_forward_length(n_ff)
    w.add_expert_feed_forward_length(n_ff)
    w.add_expert_shared_feed_forward_length(n_ff)
    w.add_expert_count(n_expert)
    w.add_expert_used_count(2)
    w.add_head_count(n_head)
    w.add_layer_norm_rms_eps(1e-6)
    n_vocab = gpt2_vocab(w)
    rng = np.random.default_rng(0)
    f32 = {"blk.0.attn_norm.weight": (n_embd,), "blk.0.ffn_norm.weight": (n_embd,), "output_norm.weight": (n_embd,),
           "blk.0.attn_q.bias": (n_embd,), "blk.0.attn_k.bias": (n_embd,), "blk.0.attn_v.bias": (n_embd,),
           "blk.0.ffn_gate_inp.weight": (n_expert, n_embd), "blk.0.ffn_gate_inp_shexp.weight": (n_embd,)}
    f16 = {"token_embd.weight": (n_vocab, n_embd), "blk.0.attn_q.weight": (n_embd, n_embd),
           "blk.0.attn_k.weight": (n_embd, n_embd), "blk.0.attn_v.weight": (n_embd, n_embd),
           "blk.0.attn_output.weight": (n_embd, n_embd), "blk.0.ffn_gate_exps.weight": (n_expert, n_ff, n_embd),
           "blk.0.ffn_up_exps.weight": (n_expert, n_ff, n_embd), "blk.0.ffn_down_exps.weight": (n_expert, n_embd, n_ff),
           "blk.0.ffn_gate_shexp.weight": (n_ff, n_embd), "blk.0.ffn_up_shexp.weight": (n_ff, n_embd),
           "blk.0.ffn_down_shexp.weight": (n_embd, n_ff)}
    for name, shape in f32.items():
        w.add_tensor(name, rng.standard_normal(shape).astype(np.float32))
    for name, shape in f16.items():
        w.add_tensor(name, rng.standard_normal(shape).astype(np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def vocab_only(path, vocab_fn):
    w = gguf.GGUFWriter(str(path), "llama")
    vocab_fn(w)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write(target, name, data):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / f"seed_{name}").write_bytes(data if isinstance(data, bytes) else data.encode())


def main():
    g = CORPUS / "gguf"
    g.mkdir(parents=True, exist_ok=True)
    tiny_model(g / "seed_model_f16_gpt2", "F16", gpt2_vocab)
    tiny_model(g / "seed_model_q8_spm", "Q8_0", spm_vocab)
    tiny_moe_model(g / "seed_model_qwen2moe")
    vocab_only(g / "seed_vocab_gpt2", gpt2_vocab)
    vocab_only(g / "seed_vocab_spm", spm_vocab)

    texts = ["Hello world", " leading  spaces\n\ttabs", "<|im_start|>user\nhi<|im_end|>", "caf\u00e9 \u65e5\u672c \U0001F600",
             "12345 don't I'm", "\xff\xfe invalid", "<s> </s> <unk>"]
    for i, t in enumerate(texts):
        for flags in (0, 1, 6, 7, 17, 25):
            raw = t.encode("utf-8", "surrogateescape") if "\xff" not in t else b"\xff\xfe invalid"
            write("tokenizer", f"{i}_{flags}", bytes([flags]) + raw)

    templates = [CHATML, "{{ bos_token }}{% for m in messages %}{{ m.role | upper }}: {{ m.content | trim }}\n{% endfor %}",
                 "{% macro f(x) %}{{ x * 2 }}{% endmacro %}{{ f(n) }}{% set y = x | tojson %}{{ y }}{{ x[1][0] }}",
                 "{% for i in range(n) %}{{ loop.index }}{% if loop.last %}.{% endif %}{% endfor %}{{ 'a' ~ 'b' }}",
                 "{{ messages | selectattr('role', 'equalto', 'user') | map(attribute='content') | join(', ') }}",
                 "{% if tools %}{{ tools | tojson(indent=2) }}{% endif %}{{ raise_exception('no') if n > 5 }}",
                 "{{ strftime_now('%Y-%m-%d') }} {{ 'x'.upper() }} {{ messages[0]['content'].split(' ') }}"]
    for i, t in enumerate(templates):
        write("template", f"src_{i}", b"\x00" + t.encode())
    msgs = [[{"role": "user", "content": "Hi"}],
            [{"role": "system", "content": "S"}, {"role": "user", "content": [{"type": "text", "text": "a"}]}],
            [{"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]}]]
    for i, m in enumerate(msgs):
        for flags in (1, 7, 9, 15):
            write("template", f"msgs_{i}_{flags}", bytes([flags]) + json.dumps(m).encode())

    chat = {"messages": msgs[0], "max_tokens": 5, "temperature": 0.5, "top_p": 0.9, "top_k": 40, "min_p": 0.05,
            "stop": ["\n", "end"], "n": 2, "seed": 7, "logprobs": True, "top_logprobs": 3,
            "logit_bias": {"5": -100, "7": 3.5}, "stream": True, "stream_options": {"include_usage": True},
            "presence_penalty": 0.5, "frequency_penalty": -0.5, "repetition_penalty": 1.1, "ignore_eos": True}
    comp = {"prompt": "Once upon", "max_tokens": 8, "logprobs": 2, "stop": "x", "seed": -1}
    bodies = [(0, chat), (0, {"messages": msgs[1], "tools": [{"type": "function"}]}), (1, comp),
              (1, {"prompt": [1, 2, 3], "max_completion_tokens": 3}), (1, {"prompt": [[4, 5]]}),
              (0, {"messages": []}), (1, {"prompt": "x", "max_tokens": 1e30}), (0, {"messages": msgs[0], "n": 0})]
    # kind 2: a Responses API body (translated to a chat body first).
    bodies += [(2, {"input": "Hi", "instructions": "Be brief.", "max_output_tokens": 4, "temperature": 0}),
               (2, {"input": [{"role": "developer", "content": "S"},
                              {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"}]}],
                    "stream": True, "text": {"format": {"type": "text"}}}),
               (2, {"input": "x", "tools": [{"type": "function"}]})]
    # kind 4: an embeddings body.
    bodies += [(4, {"input": "Hi there", "model": "m", "encoding_format": "base64"}),
               (4, {"input": ["a", "bc", "abc"], "dimensions": 32, "user": "u"}),
               (4, {"input": [1, 2, 3], "encoding_format": "float"}),
               (4, {"input": [[4, 5], [6]]}),
               (4, {"input": ["", 3]}), (4, {"input": [], "dimensions": 0})]
    for i, (kind, b) in enumerate(bodies):
        write("openai_request", f"{i}", bytes([kind]) + json.dumps(b).encode())
    constraint_seeds(msgs[0])


def constraint_seeds(messages):
    """Structured-output fields (constraint_request.cpp): every kind, good and bad."""
    schema = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 3},
                                               "b": {"enum": [1, "x", None]},
                                               "c": {"type": "array", "items": {"$ref": "#/$defs/d"}}},
              "required": ["a"], "$defs": {"d": {"anyOf": [{"type": "integer", "minimum": 0}, {"const": True}]}}}
    fields = [{"response_format": {"type": "json_object"}},
              {"response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": schema,
                                                                          "strict": True}}},
              {"response_format": {"type": "text"}, "guided_choice": ["yes", "no", ""]},
              {"guided_json": json.dumps(schema)},
              {"json_schema": {"type": "string", "format": "uuid"}},
              {"grammar": 'root ::= "a" [b-d]* x{2,3}\nx ::= ("e" | [^\\n])?'},
              {"guided_grammar": "root ::= root \"a\" | "},
              {"guided_regex": "a+"},
              {"grammar": "", "guided_json": True},
              {"guided_json": {"type": "integer"}, "grammar": 'root ::= "1"'}]
    for i, f in enumerate(fields):
        write("openai_request", f"constraint_{i}", bytes([i & 1]) + json.dumps(
            {"messages": messages, "prompt": "p", "max_tokens": 4, **f}).encode())


if __name__ == "__main__":
    main()
