#!/usr/bin/env python3
# Writes the fuzzers' seed corpora (fuzz/corpus/<target>/): a few tiny GGUF
# files (model + vocab-only, every tokenizer kind) and short valid and
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


# A SentencePiece precompiled charsmap with three rules (U+3000 -> " ",
# U+FF21 -> "A", U+FB01 -> "fi"), from sentencepiece's trainer with a rule TSV.
TINY_CHARSMAP = bytes.fromhex(
    "0004000000880300e30c020080040200801d000000000080ac080200810500000400008002000080a10500000b0000000a00"
    "00000d000000ef9002000f0000000e0000001100000010000000130000001200000015000000bcf402001700000016000000"
    "19000000180000001b0000001a0000001d0000001c0000001f0000001e000000210000002000000023000000220000002500"
    "000024000000270000002600000029000000280000002b0000002a0000002d0000002c0000002f0000002e00000031000000"
    "3000000033000000320000003500000034000000370000003600000039000000380000003b0000003a0000003d0000003c00"
    "00003f0000003e00000041000000400000004300000042000000450000004400000047000000460000004900000048000000"
    "4b0000004a0000004d0000004c0000004f0000004e0000005100000050000000530000005200000055000000540000005700"
    "00005600000059000000580000005b0000005a0000005d0000005c0000005f0000005e000000610000006000000063000000"
    "620000006500000064000000670000006600000069000000680000006b0000006a0000006d0000006c0000006f0000006e00"
    "0000710000007000000073000000720000007500000074000000770000007600000079000000780000007b0000007a000000"
    "7d0000007c0000007f0000007e00000081000000800000008300000082000000850000008400000087000000860000008900"
    "0000880000008b0000008a0000008d0000008c0000008f0000008e0000009100000090000000930000009200000095000000"
    "94000000970000009600000099000000980000009b0000009a0000009d0000009c0000009f0000009e000000a1000000a000"
    "0000a3000000a2000000a5000000a4000000a7000000a6000000a9000000a8000000ab000000aa000000ad000000ac000000"
    "af000000ae000000b1000000b0000000b3000000b2000000b5000000b4000000b7000000b6000000b9000000b8000000bb00"
    "0000ba000000bd000000bc000000bf000000be000000c1000000c0000000c3000000c2000000c5000000c4000000c7000000"
    "c6000000c9000000c8000000cb000000ca000000cd000000cc000000cf000000ce000000d1000000d0000000d3000000d200"
    "0000d5000000d4000000d7000000d6000000d9000000d8000000db000000da000000dd000000dc000000df000000de000000"
    "e1000000e0000000e3000000e2000000e5000000e4000000e7000000e6000000e9000000e8000000eb000000ea000000ed00"
    "0000ec000000ef000000ee000000f1000000f0000000f3000000f2000000f5000000f4000000f7000000f6000000f9000000"
    "f8000000fb000000fa000000fd000000fc000000ff000000fe00000020004100666900"
)


def t5_vocab(w):
    tokens = ["<pad>", "</s>", "<unk>", "\u2581", "\u2581a", "a", "b", "fi", "<extra_id_0>"]
    w.add_tokenizer_model("t5")
    w.add_token_list(tokens)
    w.add_token_scores([0.0, 0.0, 0.0, -1.0, -2.0, -3.0, -3.5, -4.0, 0.0])
    w.add_token_types([3, 3, 2, 1, 1, 1, 1, 1, 4])
    w.add_add_space_prefix(True)
    w.add_remove_extra_whitespaces(True)
    w.add_precompiled_charsmap(TINY_CHARSMAP)
    return len(tokens)


def bert_vocab(w):
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "\u2581hello", "\u2581he", "llo", "\u2581,", "##x"]
    w.add_tokenizer_model("bert")
    w.add_token_list(tokens)
    w.add_token_types([3, 3, 3, 3, 3, 1, 1, 1, 1, 1])
    w.add_unk_token_id(1)
    w.add_uint32("tokenizer.ggml.cls_token_id", 2)
    w.add_uint32("tokenizer.ggml.seperator_token_id", 3)
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
    vocab_only(g / "seed_vocab_t5", t5_vocab)
    vocab_only(g / "seed_vocab_bert", bert_vocab)

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
                 "{{ strftime_now('%Y-%m-%d') }} {{ 'x'.upper() }} {{ messages[0]['content'].split(' ') }}",
                 "{% for m in messages %}{% if m.content is none %}{% continue %}{% endif %}{{ m.content }}"
                 "{% if loop.index > 2 %}{% break %}{% endif %}{% else %}none{% endfor %}"
                 "{{ messages | rejectattr('tool_calls', 'none') | list | length }}"]
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
    cache_control_seeds()
    imatrix_seeds()


def imatrix_seeds():
    """Importance matrices in llama.cpp's GGUF layout (quantize/imatrix.h): a dense and an expert entry, and a bad one."""
    d = CORPUS / "imatrix"
    d.mkdir(parents=True, exist_ok=True)
    for name, negative in (("valid", False), ("negative_sum", True)):
        w = gguf.GGUFWriter(str(d / f"seed_{name}"), "llama")
        w.add_string("general.type", "imatrix")
        w.add_array("imatrix.datasets", ["calibration.txt"])
        w.add_uint32("imatrix.chunk_count", 2)
        w.add_uint32("imatrix.chunk_size", 64)
        dense = np.arange(256, dtype=np.float32) * (-1 if negative else 1)
        w.add_tensor("blk.0.attn_q.weight.in_sum2", dense.reshape(1, 256))
        w.add_tensor("blk.0.attn_q.weight.counts", np.array([[128]], dtype=np.float32))
        w.add_tensor("blk.0.ffn_up_exps.weight.in_sum2", np.ones((3, 256), dtype=np.float32))
        w.add_tensor("blk.0.ffn_up_exps.weight.counts", np.array([[4], [0], [9]], dtype=np.float32))
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()


def cache_control_seeds():
    """Prompt-cache markers (cache_control.cpp) on messages, parts and whole requests, good and bad."""
    eph = {"type": "ephemeral"}
    bodies = [(0, {"messages": [{"role": "system", "content": "S", "cache_control": {**eph, "ttl": "1h"}},
                                {"role": "user", "content": "q"}]}),
              (0, {"messages": [{"role": "user", "content": [{"type": "text", "text": "a", "cache_control": eph}]}],
                   "cache_control": {**eph, "ttl": 30}}),
              (1, {"prompt": "p", "cache_control": {**eph, "ttl": "90s"}}),
              (1, {"prompt": "p", "cache_control": {"type": "x", "ttl": "5d"}}),
              (0, {"messages": [{"role": "user", "content": "q", "cache_control": "ephemeral"}]})]
    for i, (kind, b) in enumerate(bodies):
        write("openai_request", f"cache_{i}", bytes([kind]) + json.dumps(b).encode())


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
