# The `tessera` command as a user runs it: generation, chat, tokenize,
# template and info on the real default model, and clean failures on bad
# arguments and bad files.
import json
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(args, stdin=None, timeout=120):
    return subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=timeout)


def test_unknown_command_fails_with_message(tessera_bin):
    r = run([tessera_bin, "no-such-command"])
    assert r.returncode != 0
    assert "unknown command" in r.stderr


def test_greedy_chat_answers_the_question(tessera_bin, model_path):
    r = run([tessera_bin, "run", "-m", model_path, "--chat", "--temp", "0", "-n", "32",
             "-p", "What is the capital of France? Answer in one sentence."])
    assert r.returncode == 0, r.stderr
    assert "Paris" in r.stdout
    assert "prompt:" in r.stderr and "generation:" in r.stderr


def test_same_seed_same_text_and_seeds_differ(tessera_bin, model_path):
    base = [tessera_bin, "run", "-m", model_path, "-p", "Once upon a time", "-n", "24", "--temp", "1.0"]
    a = run(base + ["--seed", "7"])
    b = run(base + ["--seed", "7"])
    c = run(base + ["--seed", "8"])
    assert a.returncode == 0 and b.returncode == 0 and c.returncode == 0
    assert a.stdout == b.stdout
    assert a.stdout != c.stdout


def test_max_tokens_and_stop_string(tessera_bin, model_path):
    greedy = [tessera_bin, "run", "-m", model_path, "-p", "1, 2, 3, 4, 5,", "--temp", "0", "--ignore-eos"]
    full = run(greedy + ["-n", "16"])
    assert full.returncode == 0
    assert " 8," in full.stdout  # the model counts on
    stopped = run(greedy + ["-n", "16", "--stop", " 8,"])
    assert stopped.returncode == 0
    assert " 8," not in stopped.stdout
    assert full.stdout.startswith(stopped.stdout.rstrip("\n"))


def test_every_kv_cache_type_answers_and_bad_types_are_refused(tessera_bin, model_path):
    ask = [tessera_bin, "run", "-m", model_path, "--chat", "--temp", "0", "-n", "24",
           "-p", "What is the capital of France? Answer in one sentence."]
    for flags in (["--kv-type", "f32"], ["--kv-type", "f16"], ["--kv-type", "bf16"], ["--kv-type", "Q8_0"],
                  ["--cache-type-k", "q8_0", "--cache-type-v", "f16"]):
        r = run(ask + flags)
        assert r.returncode == 0, (flags, r.stderr)
        assert "Paris" in r.stdout, flags
    bad = run(ask + ["--kv-type", "q4_0"])
    assert bad.returncode == 2 and "f32, f16, bf16 or q8_0" in bad.stderr
    both = run(ask + ["--kv-type", "f16", "--cache-type-k", "f32"])
    assert both.returncode == 2 and "excludes" in both.stderr


def test_tokenize_matches_llama_cpp_golden(tessera_bin, model_path):
    lines = (ROOT / "tests/golden/tokenizer/smollm2_135m.jsonl").read_text(encoding="utf-8").split("\n")[1:]
    cases = [c for c in map(json.loads, filter(None, lines)) if c["text"].strip()][::40]
    for case in cases:
        r = run([tessera_bin, "tokenize", "-m", model_path, "--no-bos"], stdin=case["text"])
        assert r.returncode == 0, r.stderr
        assert [int(t) for t in r.stdout.split()] == case["ids"], case["text"]


def test_tokenize_parse_special(tessera_bin, model_path):
    plain = run([tessera_bin, "tokenize", "-m", model_path], stdin="<|im_start|>user")
    special = run([tessera_bin, "tokenize", "-m", model_path, "--parse-special"], stdin="<|im_start|>user")
    assert special.stdout.split()[0] == "1"  # <|im_start|> is id 1 in SmolLM2
    assert len(plain.stdout.split()) > len(special.stdout.split())


def test_template_renders_chatml(tessera_bin, model_path, tmp_path):
    messages = tmp_path / "m.json"
    messages.write_text(json.dumps([{"role": "user", "content": "Hi"}]))
    r = run([tessera_bin, "template", "-m", model_path, "--messages", str(messages)])
    assert r.returncode == 0, r.stderr
    assert r.stdout.endswith("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")


def test_chat_session_multi_turn_and_reset(tessera_bin, model_path):
    r = run([tessera_bin, "chat", "-m", model_path, "--temp", "0", "-n", "24"],
            stdin="What is 2+2?\n/reset\nSay hello.\n/exit\n")
    assert r.returncode == 0, r.stderr
    assert "4" in r.stdout
    assert "conversation cleared" in r.stderr


def test_chat_prefills_only_each_new_turn(tessera_bin, model_path):
    # Ten turns through one engine: each turn's prompt is the whole
    # conversation re-rendered, and the prefix cache must supply what the
    # previous turn already computed. Per turn k > 1 the tokens prefilled
    # (prompt - cached) may exceed the new turn's own tokens (everything after
    # the previous prompt and answer) by at most:
    #  - 1: the previous answer's last sampled token (here ChatML's <|im_end|>,
    #    which the template re-renders) was sampled but never run through the
    #    model, so it has no K/V yet;
    #  - 15: the cache holds whole blocks of 16 tokens, so up to 15 computed
    #    tokens in the previous turn's last, partial block are run again.
    questions = ["What is 2+2?", "Name a color.", "What is the capital of France?", "Say hello.",
                 "Count to three.", "Name an animal.", "What is water?", "Tell me a joke.",
                 "What day comes after Monday?", "Thank you."]
    r = run([tessera_bin, "chat", "-m", model_path, "--temp", "0", "-n", "16", "--stats"],
            stdin="\n".join(questions) + "\n/exit\n", timeout=300)
    assert r.returncode == 0, r.stderr
    turns = [tuple(int(x) for x in line.split()[2::2])
             for line in r.stderr.splitlines() if line.startswith("stats: ")]
    assert len(turns) == len(questions), r.stderr
    block = 16
    assert turns[0][1] == 0  # nothing cached before the first turn
    for (prev_prompt, _, prev_generated), (prompt, cached, _) in zip(turns, turns[1:]):
        new_turn = prompt - prev_prompt - prev_generated
        assert new_turn > 0
        assert cached > 0
        assert prompt - cached <= new_turn + 1 + (block - 1), (prev_prompt, prev_generated, prompt, cached)


def test_info_lists_metadata_and_tensors(tessera_bin, model_path):
    r = run([tessera_bin, "info", "-m", model_path])
    assert r.returncode == 0
    assert "272 tensors" in r.stdout
    assert "llama.attention.head_count_kv" in r.stdout
    assert "token_embd.weight" in r.stdout


def test_bad_arguments_give_one_line_and_nonzero_exit(tessera_bin, model_path):
    for args in (["run", "-p", "hi"], ["run", "-m", model_path, "-p", "x", "-n", "abc"],
                 ["tokenize"], ["info"], ["run", "-m", model_path, "-p", "x", "--bogus"]):
        r = run([tessera_bin] + args)
        assert r.returncode != 0, args
        assert len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)


def test_bad_model_files_are_rejected_cleanly(tessera_bin, model_path, tmp_path):
    data = pathlib.Path(model_path).read_bytes()
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(data[: len(data) // 2])
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"not a model at all" * 100)
    for path, needle in ((truncated, "past the end"), (garbage, "magic"), (tmp_path / "missing.gguf", "cannot open")):
        r = run([tessera_bin, "run", "-m", str(path), "-p", "hi"])
        assert r.returncode == 1
        assert needle in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


def test_sampling_parameters_are_validated(tessera_bin, model_path):
    r = run([tessera_bin, "run", "-m", model_path, "-p", "x", "--top-p", "1.5"])
    assert r.returncode != 0
    assert "top_p" in r.stderr


def test_bench_reports_every_test_as_json(tessera_bin, model_path):
    r = run([tessera_bin, "bench", "-m", model_path, "-p", "16", "-n", "4", "-r", "3", "-b", "2", "--batch-prompt", "8",
             "-d", "0,16", "--bw-mib", "8", "-t", "2", "--json"])
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["read_bandwidth_gbs"] > 0
    tests = {res["test"]: res for res in out["results"]}
    assert set(tests) == {"pp16", "tg4", "tg4 @ d16", "2 seqs x tg4 @ d8"}
    for res in tests.values():
        # The untimed warm-up repetition is not among the three reported.
        assert len(res["tps"]) == 3 and all(t > 0 for t in res["tps"]), res
    # The roofline is a ratio for single-stream decode only.
    assert 0 < tests["tg4"]["roofline"] and "roofline" not in tests["pp16"]
    # The compute ratio is for prompts and batched steps: their matmul
    # multiply-adds per second over the int8 peak, which none can reach.
    if out["kernels"] != "scalar":
        peak, macs = out["int8_peak_macs"], out["matmul_macs_per_prompt_token"]
        assert peak > 0 and macs > 0
        for name in ("pp16", "2 seqs x tg4 @ d8"):
            assert tests[name]["tps_mean"] * macs / peak <= tests[name]["compute"] < 1, tests[name]
        assert "compute" not in tests["tg4"]
