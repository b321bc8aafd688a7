# Structured output end to end with the default model: response_format
# (json_object, json_schema), vLLM's guided_* and llama-server's grammar /
# json_schema fields on chat and text completions, streaming and not, n > 1,
# greedy and sampled; every constrained answer parses and validates. Bad
# schemas and grammars, oversized and deeply nested ones get a 400 and the
# server keeps serving.
import json
import re

import httpx
import jsonschema
import openai
import pydantic
import pytest

from server_fixture import MODEL_ID, ServerProcess, metric, sse_events

CHAT = [{"role": "user", "content": "Describe a person called Ada as JSON."}]
MAX_TOKENS = 160

SCHEMAS = {
    "required_props": {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 20}, "age": {"type": "integer", "minimum": 0},
                       "member": {"type": "boolean"}},
        "required": ["name", "age", "member"],
    },
    "enum": {
        "type": "object",
        "properties": {"color": {"enum": ["red", "green", "blue"]}, "size": {"type": "string",
                                                                            "enum": ["S", "M", "L"]}},
        "required": ["color", "size"],
    },
    "array": {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string", "maxLength": 8},
                                "minItems": 1, "maxItems": 3}},
        "required": ["tags"],
    },
    "nested": {
        "type": "object",
        "properties": {
            "person": {"type": "object",
                       "properties": {"name": {"type": "string", "maxLength": 16},
                                      "address": {"type": "object",
                                                  "properties": {"city": {"type": "string", "maxLength": 16},
                                                                 "zip": {"type": "string", "maxLength": 5}},
                                                  "required": ["city", "zip"]}},
                       "required": ["name", "address"]},
            "flags": {"type": "array", "items": {"type": "boolean"}, "maxItems": 2},
        },
        "required": ["person", "flags"],
    },
    "defs_ref": {
        "$defs": {"item": {"type": "object", "properties": {"id": {"type": "integer", "minimum": 1},
                                                           "ok": {"type": "boolean"}},
                           "required": ["id", "ok"]}},
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/item"}, "maxItems": 2}},
        "required": ["items"],
    },
}


@pytest.fixture(scope="module")
def server(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path, ["--max-body-bytes", "4M"])
    yield srv
    code = srv.stop()
    assert code == 0, srv.final_log


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.base_url + "/v1", api_key="unused", max_retries=0, timeout=300)


def post(server, path, body, timeout=300):
    return httpx.post(server.base_url + path, json={"model": MODEL_ID, **body}, timeout=timeout)


def chat(server, **body):
    r = post(server, "/v1/chat/completions", {"messages": CHAT, "max_tokens": MAX_TOKENS, **body})
    assert r.status_code == 200, r.text
    return r.json()


def streamed_texts(server, path, body):
    """Each choice's text and finish reason, from an SSE response."""
    texts, finishes = {}, {}
    with httpx.stream("POST", server.base_url + path, json={"model": MODEL_ID, "stream": True, **body},
                      timeout=300) as r:
        assert r.status_code == 200, r.read()
        for data in sse_events(r):
            if data == "[DONE]":
                continue
            chunk = json.loads(data)
            assert "error" not in chunk, chunk
            for c in chunk["choices"]:
                piece = c["delta"].get("content") if "delta" in c else c.get("text")
                texts[c["index"]] = texts.get(c["index"], "") + (piece or "")
                if c.get("finish_reason"):
                    finishes[c["index"]] = c["finish_reason"]
    return texts, finishes


def response_format(schema, name="answer", strict=True):
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": strict}}


def test_json_object_parses(server):
    out = chat(server, response_format={"type": "json_object"}, temperature=0)
    choice = out["choices"][0]
    assert choice["finish_reason"] == "stop", choice
    assert isinstance(json.loads(choice["message"]["content"]), dict)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_json_schema_greedy_validates_and_repeats(server, name):
    schema = SCHEMAS[name]
    first = chat(server, response_format=response_format(schema), temperature=0)
    second = chat(server, response_format=response_format(schema), temperature=0)
    text = first["choices"][0]["message"]["content"]
    assert first["choices"][0]["finish_reason"] == "stop", text
    jsonschema.validate(json.loads(text), schema)
    assert second["choices"][0]["message"]["content"] == text, "greedy constrained output must repeat"


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_json_schema_sampled_n2_validates(server, name):
    schema = SCHEMAS[name]
    for seed in (1, 2, 3):
        out = chat(server, response_format=response_format(schema), temperature=1.0, seed=seed, n=2)
        assert len(out["choices"]) == 2
        for choice in out["choices"]:
            assert choice["finish_reason"] == "stop", (seed, choice)
            jsonschema.validate(json.loads(choice["message"]["content"]), schema)


def test_json_schema_streamed_n2_matches_non_streamed(server):
    schema = SCHEMAS["nested"]
    body = {"messages": CHAT, "max_tokens": MAX_TOKENS, "response_format": response_format(schema),
            "temperature": 0.8, "seed": 5, "n": 2}
    texts, finishes = streamed_texts(server, "/v1/chat/completions", body)
    assert sorted(texts) == [0, 1] and finishes == {0: "stop", 1: "stop"}
    for text in texts.values():
        jsonschema.validate(json.loads(text), schema)
    whole = chat(server, **{k: v for k, v in body.items() if k not in ("messages", "max_tokens")})
    assert [c["message"]["content"] for c in whole["choices"]] == [texts[0], texts[1]]


def test_completions_guided_json_and_llama_server_json_schema(server):
    schema = SCHEMAS["enum"]
    for field in ("guided_json", "json_schema"):
        r = post(server, "/v1/completions", {"prompt": "A color and a size as JSON:", "max_tokens": MAX_TOKENS,
                                             "temperature": 0, field: schema})
        assert r.status_code == 200, r.text
        choice = r.json()["choices"][0]
        assert choice["finish_reason"] == "stop", choice
        jsonschema.validate(json.loads(choice["text"]), schema)
    # vLLM also takes the schema as a JSON string.
    texts, finishes = streamed_texts(server, "/v1/completions", {
        "prompt": "A color and a size as JSON:", "max_tokens": MAX_TOKENS, "temperature": 0,
        "guided_json": json.dumps(schema)})
    assert finishes == {0: "stop"}
    jsonschema.validate(json.loads(texts[0]), schema)


def test_guided_choice(server):
    choices = ["positive", "negative", "neutral"]
    for seed in (1, 2, 3, 4):
        out = chat(server, messages=[{"role": "user", "content": "Sentiment of 'I love it'?"}], guided_choice=choices,
                   temperature=1.0, seed=seed, n=2)
        for choice in out["choices"]:
            assert choice["message"]["content"] in choices
            assert choice["finish_reason"] == "stop"


def test_gbnf_grammar_and_guided_grammar(server):
    gbnf = 'root ::= "Answer: " [0-9] [0-9]? " apples" ("!" | ".")'
    for field in ("grammar", "guided_grammar"):
        r = post(server, "/v1/completions", {"prompt": "How many apples?", "max_tokens": 32, "temperature": 1.0,
                                             "seed": 3, field: gbnf})
        assert r.status_code == 200, r.text
        choice = r.json()["choices"][0]
        text = choice["text"]
        assert text.startswith("Answer: ") and text[-1] in "!." and text[:-1].endswith(" apples"), text
        assert text[8:-8].isdigit() and 1 <= len(text[8:-8]) <= 2, text
        assert choice["finish_reason"] == "stop"


def test_guided_regex(server):
    pattern = r"[A-Z][a-z]{2,8} (is|was) [0-9]{1,3}(\.[0-9])?%"
    for seed in (1, 2):
        r = post(server, "/v1/completions", {"prompt": "A fact:", "max_tokens": 24, "temperature": 1.0,
                                             "seed": seed, "n": 2, "guided_regex": pattern})
        assert r.status_code == 200, r.text
        for choice in r.json()["choices"]:
            assert re.fullmatch(pattern, choice["text"]), choice["text"]
            assert choice["finish_reason"] == "stop"


def test_openai_client_response_format(client):
    schema = SCHEMAS["required_props"]
    out = client.chat.completions.create(model=MODEL_ID, messages=CHAT, max_tokens=MAX_TOKENS, temperature=0,
                                         response_format=response_format(schema))
    jsonschema.validate(json.loads(out.choices[0].message.content), schema)
    out = client.chat.completions.create(model=MODEL_ID, messages=CHAT, max_tokens=MAX_TOKENS, temperature=0,
                                         response_format={"type": "json_object"})
    assert isinstance(json.loads(out.choices[0].message.content), dict)
    # "text" constrains nothing: the same answer as no response_format.
    plain = client.chat.completions.create(model=MODEL_ID, messages=CHAT, max_tokens=16, temperature=0)
    text = client.chat.completions.create(model=MODEL_ID, messages=CHAT, max_tokens=16, temperature=0,
                                          response_format={"type": "text"})
    assert text.choices[0].message.content == plain.choices[0].message.content


class Pet(pydantic.BaseModel):
    name: str
    species: str
    legs: int


def test_openai_client_parse_with_a_pydantic_model(client):
    # The client turns the model into a strict json_schema response_format
    # and parses the answer back into it.
    out = client.chat.completions.parse(model=MODEL_ID, max_tokens=MAX_TOKENS, temperature=0, response_format=Pet,
                                        messages=[{"role": "user", "content": "Describe a pet cat as JSON."}])
    pet = out.choices[0].message.parsed
    assert isinstance(pet, Pet) and pet.legs >= 0, out.choices[0].message.content


def test_grammar_max_bytes_flag(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path, ["--grammar-max-bytes", "64"])
    try:
        small = post(srv, "/v1/completions", {"prompt": "Hi", "max_tokens": 4, "grammar": 'root ::= "ok"'})
        assert small.status_code == 200 and small.json()["choices"][0]["text"] == "ok", small.text
        big = post(srv, "/v1/completions", {"prompt": "Hi", "max_tokens": 4,
                                            "grammar": 'root ::= "' + "x" * 80 + '"'})
        assert big.status_code == 400 and big.json()["error"]["param"] == "grammar", big.text
        assert "64 bytes" in big.json()["error"]["message"]
    finally:
        assert srv.stop() == 0, srv.final_log


def deep_schema_text(levels):
    """A schema nesting `levels` objects, as JSON text (too deep for Python's json)."""
    return '{"type":"object","properties":{"a":' * levels + '{"type":"string"}' + '},"required":["a"]}' * levels


def big_schema(n_bytes):
    props, size, k = {}, 0, 0
    while size < n_bytes:
        name = f"property_number_{k:07d}"
        props[name] = {"type": "string", "description": "x" * 200}
        size += len(name) + 250
        k += 1
    return {"type": "object", "properties": props}


@pytest.mark.parametrize("body,param,words", [
    ({"response_format": response_format({"type": "object", "properties": {"a": {"type": "string",
                                                                                  "format": "hostname"}}})},
     "response_format.json_schema.schema", ["format"]),
    ({"response_format": response_format({"type": "frobnicate"})}, "response_format.json_schema.schema",
     ["frobnicate"]),
    ({"response_format": {"type": "json_schema"}}, "response_format.json_schema", []),
    ({"response_format": {"type": "xml"}}, "response_format.type", ["xml"]),
    ({"grammar": 'root ::= "a" |\nfoo ::= [z-'}, "grammar", ["line 2"]),
    ({"guided_grammar": "root ::= undefined-rule"}, "guided_grammar", ["undefined-rule"]),
    ({"guided_choice": []}, "guided_choice", []),
    ({"guided_choice": ["a", 3]}, "guided_choice", []),
    ({"guided_regex": "(?=a)b"}, "guided_regex", ["lookahead"]),
    ({"guided_json": {"type": "string"}, "grammar": 'root ::= "x"'}, "grammar", ["At most one"]),
    ({"response_format": {"type": "json_object"}, "guided_choice": ["a"]}, "guided_choice", ["At most one"]),
    ({"guided_json": deep_schema_text(10000)}, "guided_json", ["nests deeper"]),
    ({"json_schema": big_schema(1200 * 1000)}, "json_schema", ["too large"]),
    ({"grammar": "root ::= " + " | ".join(f'"{k}"' for k in range(120000))}, "grammar", ["too large"]),
])
def test_bad_constraints_are_400_and_the_server_keeps_serving(server, body, param, words):
    for path, prompt in (("/v1/chat/completions", {"messages": CHAT}), ("/v1/completions", {"prompt": "Hi"})):
        r = post(server, path, {**prompt, "max_tokens": 8, **body})
        assert r.status_code == 400, r.text[:500]
        err = r.json()["error"]
        assert err["type"] == "invalid_request_error"
        if param is not None:
            assert err["param"] == param, err
        for w in words:
            assert w.lower() in err["message"].lower(), err
    ok = post(server, "/v1/completions", {"prompt": "Hi", "max_tokens": 4, "guided_choice": ["yes", "no"]})
    assert ok.status_code == 200 and ok.json()["choices"][0]["text"] in ("yes", "no")


def test_schema_nesting_10000_levels_in_the_body_is_400(server):
    body = '{"model":"%s","prompt":"Hi","max_tokens":4,"guided_json":%s}' % (MODEL_ID, deep_schema_text(10000))
    r = httpx.post(server.base_url + "/v1/completions", content=body,
                   headers={"Content-Type": "application/json"}, timeout=60)
    assert r.status_code == 400, r.text[:500]
    assert "nest" in r.json()["error"]["message"].lower()
    ok = post(server, "/v1/completions", {"prompt": "Hi", "max_tokens": 4, "guided_choice": ["yes", "no"]})
    assert ok.status_code == 200 and ok.json()["choices"][0]["text"] in ("yes", "no")


def test_metrics_count_constrained_requests(server):
    before = httpx.get(server.base_url + "/metrics").text
    chat(server, guided_choice=["a", "b"], temperature=0, max_tokens=4)
    after = httpx.get(server.base_url + "/metrics").text
    assert metric(after, "tessera_constrained_requests_total") == metric(before, "tessera_constrained_requests_total") + 1
    assert metric(after, "tessera_grammar_compile_seconds_count") > metric(before, "tessera_grammar_compile_seconds_count")
    assert metric(after, "tessera_grammar_mask_seconds_count") > metric(before, "tessera_grammar_mask_seconds_count")
