# `tessera serve` end to end with the real model: the official `openai` client
# for chat and text completions (streaming and not), plus raw HTTP for the
# llama-server style endpoints, metrics, errors, disconnects and concurrency.
import concurrent.futures
import json

import httpx
import openai
import pytest

from server_fixture import MODEL_ID, ServerProcess, metric, sse_events, unlabel_model, wait_until_idle

API_KEY = "test-key-123"
OTHER_KEY = "other-key-456"
CHAT = [{"role": "user", "content": "What is the capital of France? Answer in one sentence."}]


@pytest.fixture(scope="module")
def server(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path, ["--max-body-bytes", "1M", "--model-name", "smollm2",
                                                  "--alias", MODEL_ID])
    yield srv
    code = srv.stop()
    assert code == 0, srv.final_log


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.base_url + "/v1", api_key="unused", max_retries=0, timeout=120)


def test_health_ready_and_models(server, client):
    assert httpx.get(server.base_url + "/health").json() == {"status": "ok"}
    assert httpx.get(server.base_url + "/ready").status_code == 200
    models = client.models.list()
    assert [m.id for m in models.data] == ["smollm2", MODEL_ID]


def test_chat_stream_matches_non_stream_at_temperature_zero(client):
    full = client.chat.completions.create(model=MODEL_ID, messages=CHAT, temperature=0, max_tokens=24)
    assert full.object == "chat.completion"
    assert full.id.startswith("chatcmpl-")
    assert full.model == MODEL_ID
    choice = full.choices[0]
    assert choice.message.role == "assistant"
    assert "Paris" in choice.message.content
    assert choice.finish_reason in ("stop", "length")

    chunks = list(client.chat.completions.create(model=MODEL_ID, messages=CHAT, temperature=0, max_tokens=24,
                                                 stream=True))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert all(c.object == "chat.completion.chunk" and c.id == chunks[0].id for c in chunks)
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices[0].finish_reason]
    assert text == choice.message.content
    assert finishes == [choice.finish_reason]


def test_stream_include_usage(client):
    chunks = list(client.chat.completions.create(model=MODEL_ID, messages=CHAT, temperature=0, max_tokens=8, stream=True,
                                                 stream_options={"include_usage": True}))
    assert all(c.usage is None for c in chunks[:-1])
    last = chunks[-1]
    assert last.choices == []
    assert 0 < last.usage.completion_tokens <= 8
    assert last.usage.total_tokens == last.usage.prompt_tokens + last.usage.completion_tokens


def test_completions_string_and_token_prompts_agree(server, client):
    prompt = "The quick brown fox"
    by_text = client.completions.create(model=MODEL_ID, prompt=prompt, temperature=0, max_tokens=12)
    assert by_text.object == "text_completion"
    assert by_text.id.startswith("cmpl-")
    ids = httpx.post(server.base_url + "/tokenize", json={"content": prompt, "add_special": True}).json()["tokens"]
    by_ids = client.completions.create(model=MODEL_ID, prompt=ids, temperature=0, max_tokens=12)
    assert by_ids.choices[0].text == by_text.choices[0].text
    assert by_ids.usage.prompt_tokens == len(ids) == by_text.usage.prompt_tokens
    assert by_text.usage.completion_tokens == 12 or by_text.choices[0].finish_reason == "stop"


def test_n_choices(client):
    r = client.chat.completions.create(model=MODEL_ID, messages=CHAT, n=2, temperature=1.0, seed=3, max_tokens=8)
    assert [c.index for c in r.choices] == [0, 1]
    assert all(c.finish_reason in ("stop", "length") for c in r.choices)
    assert 0 < r.usage.completion_tokens <= 16


def test_stop_string_and_length(client):
    base = dict(model=MODEL_ID, prompt="1, 2, 3, 4, 5,", temperature=0, max_tokens=16, extra_body={"ignore_eos": True})
    full = client.completions.create(**base)
    assert " 8," in full.choices[0].text
    assert full.choices[0].finish_reason == "length"
    assert full.usage.completion_tokens == 16
    stopped = client.completions.create(stop=[" 8,", "zzz"], **base)
    assert stopped.choices[0].finish_reason == "stop"
    assert " 8," not in stopped.choices[0].text
    assert full.choices[0].text.startswith(stopped.choices[0].text)
    short = client.completions.create(**{**base, "max_tokens": 3})
    assert short.choices[0].finish_reason == "length"
    assert short.usage.completion_tokens == 3


def test_repeated_long_prompt_hits_prefix_cache(client):
    system = "You are a helpful assistant. " + " ".join(f"Rule {i}: be concise and accurate." for i in range(40))
    messages = [{"role": "system", "content": system}, {"role": "user", "content": "Say hi."}]
    first = client.chat.completions.create(model=MODEL_ID, messages=messages, temperature=0, max_tokens=4)
    second = client.chat.completions.create(model=MODEL_ID, messages=messages, temperature=0, max_tokens=4)
    assert first.usage.prompt_tokens > 200
    assert second.usage.prompt_tokens == first.usage.prompt_tokens
    assert second.usage.prompt_tokens_details.cached_tokens > 0
    assert second.choices[0].message.content == first.choices[0].message.content


def test_chat_logprobs_shape(client):
    r = client.chat.completions.create(model=MODEL_ID, messages=CHAT, temperature=0, max_tokens=6, logprobs=True,
                                       top_logprobs=3)
    content = r.choices[0].logprobs.content
    assert len(content) == r.usage.completion_tokens
    for entry in content:
        assert entry.logprob <= 0
        assert bytes(entry.bytes).decode("utf-8", "replace") == entry.token or "\ufffd" in entry.token
        assert len(entry.top_logprobs) == 3
        # Greedy: the sampled token is the most likely one.
        assert entry.top_logprobs[0].logprob == pytest.approx(entry.logprob, abs=1e-4)


def test_completion_logprobs_shape(client):
    r = client.completions.create(model=MODEL_ID, prompt="Once upon a time", temperature=0, max_tokens=5, logprobs=2)
    lp = r.choices[0].logprobs
    n = r.usage.completion_tokens
    assert len(lp.tokens) == len(lp.token_logprobs) == len(lp.top_logprobs) == len(lp.text_offset) == n
    assert all(len(t) <= 2 for t in lp.top_logprobs)
    assert lp.text_offset == sorted(lp.text_offset)


def test_tokenize_detokenize_round_trip(server):
    text = "Hello, world! Ünïcödé and <|im_start|> too."
    tokens = httpx.post(server.base_url + "/tokenize", json={"content": text}).json()["tokens"]
    assert tokens and all(isinstance(t, int) for t in tokens)
    back = httpx.post(server.base_url + "/detokenize", json={"tokens": tokens}).json()["content"]
    assert back == text.replace("<|im_start|>", "")  # a control token detokenizes to nothing
    pieces = httpx.post(server.base_url + "/tokenize", json={"content": "Hi there", "with_pieces": True}).json()
    assert "".join(p["piece"] for p in pieces["tokens"]) == "Hi there"
    bad = httpx.post(server.base_url + "/detokenize", json={"tokens": [10 ** 9]})
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "tokens"


def test_metrics_exposition(server, client):
    client.completions.create(model=MODEL_ID, prompt="Hi", max_tokens=2)
    r = httpx.get(server.base_url + "/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    text = "\n".join(unlabel_model(line) for line in r.text.splitlines())
    for name in ["tessera_time_to_first_token_seconds_bucket{le=\"+Inf\"}", "tessera_time_to_first_token_seconds_sum",
                 "tessera_time_to_first_token_seconds_count", "tessera_inter_token_latency_seconds_count",
                 "tessera_e2e_request_latency_seconds_count", "tessera_num_requests_waiting",
                 "tessera_num_requests_running", "tessera_kv_blocks_used", "tessera_kv_blocks_total",
                 "tessera_prefix_cache_queries_total", "tessera_prefix_cache_hits_total", "tessera_prompt_tokens_total",
                 "tessera_generation_tokens_total", "tessera_preemptions_total", "tessera_requests_finished_total"]:
        assert name in text, name
    assert metric(text, "tessera_requests_finished_total") >= 1
    assert metric(text, "tessera_generation_tokens_total") >= 2
    assert metric(text, "tessera_kv_blocks_total") > 0


def test_errors_use_openai_bodies(server, client):
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=MODEL_ID, messages=CHAT, n=100)
    assert e.value.status_code == 400
    assert e.value.body["param"] == "n"
    with pytest.raises(openai.BadRequestError) as e:
        client.completions.create(model=MODEL_ID, prompt="Hi", max_tokens=10 ** 7)
    assert e.value.body["code"] == "context_length_exceeded"

    def check(r, status):
        assert r.status_code == status, r.text
        err = r.json()["error"]
        assert set(err) == {"message", "type", "param", "code"} and err["message"]

    url = server.base_url
    check(httpx.post(url + "/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"}),
          400)
    check(httpx.post(url + "/v1/chat/completions", json={"messages": CHAT, "temperature": "hot"}), 400)
    check(httpx.get(url + "/v1/nope"), 404)
    check(httpx.post(url + "/v1/nope", json={}), 404)
    check(httpx.get(url + "/v1/chat/completions"), 405)
    check(httpx.post(url + "/v1/completions", json={"prompt": "x" * (2 << 20)}), 413)
    deep = "[" * 10000 + "]" * 10000
    check(httpx.post(url + "/v1/completions", content='{"prompt": ' + deep + "}"), 400)
    # The server is still fine afterwards.
    assert client.completions.create(model=MODEL_ID, prompt="Hi", max_tokens=1).choices[0].finish_reason


def test_stream_disconnect_cancels_and_server_keeps_working(server, client):
    body = {"prompt": "Once upon a time", "max_tokens": 4000, "ignore_eos": True, "stream": True}
    with httpx.stream("POST", server.base_url + "/v1/completions", json=body, timeout=60) as r:
        assert r.status_code == 200
        lines = r.iter_lines()
        got = [next(lines) for _ in range(4)]
        assert any(line.startswith("data: ") for line in got)
    assert wait_until_idle(server), "the abandoned stream kept running"
    r = client.completions.create(model=MODEL_ID, prompt="Hi", max_tokens=2)
    assert r.choices[0].finish_reason in ("stop", "length")


def test_non_stream_disconnect_cancels(server):
    body = {"prompt": "Once upon a time", "max_tokens": 4000, "ignore_eos": True}
    with pytest.raises(httpx.TimeoutException):
        httpx.post(server.base_url + "/v1/completions", json=body, timeout=1.0)
    assert wait_until_idle(server), "the abandoned request kept running"


def test_sixteen_concurrent_streams(server):
    def one(i):
        body = {"messages": [{"role": "user", "content": f"Count to {i + 3}."}], "max_tokens": 16, "stream": True,
                "temperature": 0.7, "seed": i}
        with httpx.stream("POST", server.base_url + "/v1/chat/completions", json=body, timeout=300) as r:
            assert r.status_code == 200
            events = sse_events(r)
        assert events[-1] == "[DONE]"
        chunks = [json.loads(e) for e in events[:-1]]
        finishes = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"][0]["finish_reason"]]
        assert len(finishes) == 1 and finishes[0] in ("stop", "length")
        assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
        return "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        texts = list(pool.map(one, range(16)))
    # Every stream produced text of its own (16 prompts and seeds, 16 answers):
    # one stream's tokens delivered to another, or dropped, would show here.
    assert len(texts) == 16 and all(texts), texts
    assert len(set(texts)) >= 8, texts


@pytest.fixture(scope="module")
def auth_server(tessera_bin, model_path, tmp_path_factory):
    key_file = tmp_path_factory.mktemp("keys") / "keys.txt"
    key_file.write_text(f"# test keys\n{API_KEY}\n\n{OTHER_KEY}\n")
    srv = ServerProcess(tessera_bin, model_path, ["--api-key-file", str(key_file), "--max-seqs", "1",
                                                  "--max-waiting", "1"], api_key=API_KEY)
    yield srv
    code = srv.stop()
    assert code == 0, srv.final_log


def test_api_key_required_except_health_and_ready(auth_server):
    url = auth_server.base_url
    assert httpx.get(url + "/health").status_code == 200
    assert httpx.get(url + "/ready").status_code == 200  # probes carry no key
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": API_KEY}):
        r = httpx.get(url + "/v1/models", headers=headers)
        assert r.status_code == 401
        assert r.json()["error"]["code"] == "invalid_api_key"
        assert httpx.post(url + "/v1/completions", json={"prompt": "Hi"}, headers=headers).status_code == 401
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=url + "/v1", api_key="wrong", max_retries=0).models.list()
    good = openai.OpenAI(base_url=url + "/v1", api_key=API_KEY, max_retries=0, timeout=120)
    assert good.completions.create(model=MODEL_ID, prompt="Hi", max_tokens=2).choices[0].text is not None


def test_api_keys_do_not_share_prefix_cache(auth_server):
    system = "You are a careful assistant. " + " ".join(f"Fact {i}: water is wet." for i in range(40))
    messages = [{"role": "system", "content": system}, {"role": "user", "content": "Hello?"}]

    def cached(key):
        c = openai.OpenAI(base_url=auth_server.base_url + "/v1", api_key=key, max_retries=0, timeout=120)
        r = c.chat.completions.create(model=MODEL_ID, messages=messages, temperature=0, max_tokens=2)
        return r.usage.prompt_tokens_details.cached_tokens

    assert cached(API_KEY) == 0
    assert cached(API_KEY) > 0
    assert cached(OTHER_KEY) == 0  # same prompt, other key: its own cache domain
    assert cached(OTHER_KEY) > 0


def test_overload_gets_429_with_retry_after(auth_server):
    headers = {"Authorization": "Bearer " + API_KEY}
    body = {"prompt": "Once upon a time", "max_tokens": 64, "ignore_eos": True}

    def one(_):
        return httpx.post(auth_server.base_url + "/v1/completions", json=body, headers=headers, timeout=300)

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(one, range(8)))
    codes = sorted(r.status_code for r in responses)
    assert set(codes) <= {200, 429} and 200 in codes and 429 in codes, codes
    refused = next(r for r in responses if r.status_code == 429)
    assert refused.headers["retry-after"]
    assert refused.json()["error"]["type"] == "rate_limit_error"
