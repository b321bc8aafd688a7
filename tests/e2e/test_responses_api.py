# OpenAI's Responses API (POST /v1/responses) through the official client:
# the same text as the chat route for the same conversation, the typed stream
# events in order, incomplete at max_output_tokens, text.format constraining
# the output as chat's response_format does, and a 400 naming each feature
# tessera does not carry instead of silently ignoring it.
import json

import httpx
import jsonschema
import openai
import pytest

from server_fixture import MODEL_ID, ServerProcess

QUESTION = "What is the capital of France?"
INSTRUCTIONS = "Answer in one sentence."


@pytest.fixture(scope="module")
def server(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path)
    yield srv
    assert srv.stop() == 0, srv.final_log


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.base_url + "/v1", api_key="x", max_retries=0, timeout=120)


def test_response_matches_the_chat_route(client):
    r = client.responses.create(model=MODEL_ID, input=QUESTION, instructions=INSTRUCTIONS, max_output_tokens=32,
                                temperature=0)
    chat = client.chat.completions.create(model=MODEL_ID, max_tokens=32, temperature=0,
                                          messages=[{"role": "system", "content": INSTRUCTIONS},
                                                    {"role": "user", "content": QUESTION}])
    assert r.object == "response" and r.id.startswith("resp_") and r.model == MODEL_ID
    assert r.status == "completed" and r.incomplete_details is None
    assert r.output_text == chat.choices[0].message.content
    assert "Paris" in r.output_text
    assert r.output[0].type == "message" and r.output[0].role == "assistant" and r.output[0].id.startswith("msg_")
    assert r.usage.input_tokens == chat.usage.prompt_tokens
    assert r.usage.output_tokens == chat.usage.completion_tokens
    assert r.usage.total_tokens == r.usage.input_tokens + r.usage.output_tokens


def test_stream_events_in_order_and_same_text(client):
    whole = client.responses.create(model=MODEL_ID, input=QUESTION, max_output_tokens=24, temperature=0)
    events = list(client.responses.create(
        model=MODEL_ID, max_output_tokens=24, temperature=0, stream=True,
        input=[{"role": "user", "content": [{"type": "input_text", "text": QUESTION}]}]))
    types = [e.type for e in events]
    assert types[:4] == ["response.created", "response.in_progress", "response.output_item.added",
                         "response.content_part.added"]
    assert types[-4:] == ["response.output_text.done", "response.content_part.done", "response.output_item.done",
                          "response.completed"]
    assert set(types[4:-4]) == {"response.output_text.delta"}
    assert [e.sequence_number for e in events] == list(range(len(events)))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == whole.output_text == events[-4].text
    assert events[-1].response.output_text == text
    assert events[-1].response.usage.output_tokens == whole.usage.output_tokens


def test_incomplete_at_max_output_tokens(client):
    r = client.responses.create(model=MODEL_ID, input="Count from one to one hundred.", max_output_tokens=3)
    assert r.status == "incomplete" and r.incomplete_details.reason == "max_output_tokens"
    assert r.usage.output_tokens == 3
    events = list(client.responses.create(model=MODEL_ID, input="Count from one to one hundred.",
                                          max_output_tokens=3, stream=True))
    assert events[-1].type == "response.incomplete"


def test_history_with_assistant_and_developer_turns(client):
    r = client.responses.create(model=MODEL_ID, max_output_tokens=8, temperature=0, input=[
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hello!"}]},
        {"role": "user", "content": "Bye"}])
    assert r.status in ("completed", "incomplete") and r.output_text


@pytest.mark.parametrize("extra, param", [
    ({"tools": [{"type": "function", "name": "f", "parameters": {}}]}, "tools"),
    ({"previous_response_id": "resp_1"}, "previous_response_id"),
    ({"reasoning": {"effort": "low"}}, "reasoning"),
    ({"text": {"format": {"type": "xml"}}}, "text.format.type"),
    ({"text": {"format": {"type": "json_schema", "name": "x"}}}, "text.format.schema"),
    ({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "http://x"}]}]}, "input"),
    ({"input": [{"type": "function_call_output", "call_id": "c", "output": "{}"}]}, "input"),
    ({"input": 5}, "input"),
    ({"model": "gpt-4o"}, "model"),
])
def test_unsupported_features_are_refused_by_name(server, extra, param):
    body = {"model": MODEL_ID, "input": "Hi", "max_output_tokens": 2, **extra}
    r = httpx.post(server.base_url + "/v1/responses", json=body, timeout=60)
    assert r.status_code == (404 if param == "model" else 400), r.text
    assert r.json()["error"]["param"] == param


def test_empty_tools_and_text_format_are_accepted(server):
    body = {"model": MODEL_ID, "input": "Hi", "max_output_tokens": 2, "tools": [], "tool_choice": "none",
            "text": {"format": {"type": "text"}}, "store": False}
    assert httpx.post(server.base_url + "/v1/responses", json=body, timeout=60).status_code == 200


CITY = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 20},
                                         "country": {"type": "string", "enum": ["France", "Italy", "Spain"]}},
        "required": ["city", "country"], "additionalProperties": False}


def test_text_format_json_schema_constrains_like_response_format(client):
    fmt = {"type": "json_schema", "name": "city", "schema": CITY, "strict": True}
    r = client.responses.create(model=MODEL_ID, input=QUESTION, max_output_tokens=60, temperature=0,
                                text={"format": fmt})
    assert r.status == "completed"
    jsonschema.validate(json.loads(r.output_text), CITY)
    assert r.text.format.type == "json_schema" and r.text.format.name == "city"
    # The same constraint through chat's response_format gives the same text.
    chat = client.chat.completions.create(model=MODEL_ID, max_tokens=60, temperature=0,
                                          messages=[{"role": "user", "content": QUESTION}],
                                          response_format={"type": "json_schema",
                                                           "json_schema": {"name": "city", "schema": CITY}})
    assert chat.choices[0].message.content == r.output_text
    events = list(client.responses.create(model=MODEL_ID, input=QUESTION, max_output_tokens=60, temperature=0,
                                          text={"format": fmt}, stream=True))
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == r.output_text


def test_text_format_json_object(client):
    r = client.responses.create(model=MODEL_ID, input="Describe Paris as a JSON object.", max_output_tokens=120,
                                temperature=0, text={"format": {"type": "json_object"}})
    assert r.output_text.startswith("{")
    if r.status == "completed":
        assert isinstance(json.loads(r.output_text), dict)


def test_text_format_schema_that_does_not_compile_is_a_400(server):
    body = {"model": MODEL_ID, "input": "Hi", "max_output_tokens": 2,
            "text": {"format": {"type": "json_schema", "name": "x",
                                "schema": {"type": "string", "not": {"const": "a"}}}}}
    r = httpx.post(server.base_url + "/v1/responses", json=body, timeout=60)
    assert r.status_code == 400, r.text
    assert "'not'" in r.json()["error"]["message"]
