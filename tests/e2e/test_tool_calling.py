# Tool calling end to end with the official openai client against the
# default model (SmolLM2-135M-Instruct). Its ChatML template knows no tools,
# so tessera describes them in a system message and reads the generic
# {"tool_calls": [...]} syntax back (docs/API.md, "Tool calling");
# tool_choice "required" or a named function constrains decoding to a valid
# call. The conversation with a tool result comes back for a final answer;
# bad tool requests get a 400 naming the field.
import json
import pathlib

import openai
import pytest

from server_fixture import MODEL_ID, ServerProcess, sse_events

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string", "maxLength": 30},
                           "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
            "required": ["location"],
        },
    },
}
TIME = {
    "type": "function",
    "function": {"name": "get_time", "description": "Current time in a time zone.",
                 "parameters": {"type": "object", "properties": {"tz": {"type": "string", "maxLength": 30}},
                                "required": ["tz"]}},
}
QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]
MAX_TOKENS = 80
ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path)
    yield srv
    assert srv.stop() == 0, srv.final_log


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.base_url + "/v1", api_key="x", max_retries=0, timeout=120)


def check_call(call, tools):
    """A call as OpenAI shapes it: id, type, a known name, arguments that parse and hold the required keys."""
    assert call.id.startswith("call_") and len(call.id) > 5
    assert call.type == "function"
    schema = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    assert call.function.name in schema
    args = json.loads(call.function.arguments)
    params = schema[call.function.name]
    assert set(params.get("required", [])) <= set(args) <= set(params["properties"])
    for key, value in args.items():
        assert isinstance(value, str) and len(value) <= params["properties"][key].get("maxLength", 10**9)
        assert value in params["properties"][key].get("enum", [value])
    return args


def test_auto_answers_in_openai_shape(client):
    r = client.chat.completions.create(model=MODEL_ID, messages=QUESTION, tools=[WEATHER, TIME], tool_choice="auto",
                                       temperature=0, max_tokens=MAX_TOKENS)
    choice = r.choices[0]
    if choice.message.tool_calls:
        assert choice.finish_reason == "tool_calls"
        for call in choice.message.tool_calls:
            check_call(call, [WEATHER, TIME])
    else:
        assert choice.finish_reason in ("stop", "length") and choice.message.content


def test_tools_reach_the_prompt_unless_choice_is_none(client):
    def prompt_tokens(**kw):
        return client.chat.completions.create(model=MODEL_ID, messages=QUESTION, temperature=0, max_tokens=1,
                                              **kw).usage.prompt_tokens
    plain = prompt_tokens()
    assert prompt_tokens(tools=[WEATHER], tool_choice="none") == plain
    with_tool = prompt_tokens(tools=[WEATHER])
    assert with_tool > plain
    assert prompt_tokens(tools=[WEATHER, TIME]) > with_tool


def test_auto_stream_matches_whole_response(client):
    kw = dict(model=MODEL_ID, messages=QUESTION, tools=[WEATHER], temperature=0, max_tokens=MAX_TOKENS)
    whole = client.chat.completions.create(**kw).choices[0]
    content, calls, finish = "", {}, None
    for chunk in client.chat.completions.create(stream=True, **kw):
        delta = chunk.choices[0].delta
        content += delta.content or ""
        for tc in delta.tool_calls or []:
            entry = calls.setdefault(tc.index, {"name": "", "arguments": ""})
            entry["name"] += tc.function.name or ""
            entry["arguments"] += tc.function.arguments or ""
        finish = chunk.choices[0].finish_reason or finish
    assert finish == whole.finish_reason
    assert [(c["name"], json.loads(c["arguments"])) for _, c in sorted(calls.items())] == \
        [(c.function.name, json.loads(c.function.arguments)) for c in whole.message.tool_calls or []]
    if not calls:
        assert content == whole.message.content


def test_tool_result_comes_back_for_a_final_answer(client):
    # The history an agent replays: the assistant's call with null content,
    # then the tool's result, then the model answers.
    history = QUESTION + [
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "call_1", "type": "function",
                         "function": {"name": "get_weather", "arguments": '{"location": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temperature_c": 21, "sky": "sunny"}'},
    ]
    r = client.chat.completions.create(model=MODEL_ID, messages=history, tools=[WEATHER], temperature=0,
                                       max_tokens=MAX_TOKENS)
    assert r.choices[0].message.content or r.choices[0].message.tool_calls
    # The same history streamed, with the result as content parts and the call's arguments an object string.
    history[-1]["content"] = [{"type": "text", "text": "21 C, sunny"}]
    events = list(client.chat.completions.create(model=MODEL_ID, messages=history, tools=[WEATHER], temperature=0,
                                                 max_tokens=16, stream=True))
    assert events[-1].choices[0].finish_reason in ("stop", "length", "tool_calls")


@pytest.mark.parametrize("parallel", [True, False])
def test_required_always_calls_a_tool(client, parallel):
    # Room for the most calls the grammar admits (8), as a small model may repeat its call.
    r = client.chat.completions.create(model=MODEL_ID, messages=QUESTION, tools=[WEATHER, TIME], temperature=0,
                                       tool_choice="required", parallel_tool_calls=parallel, max_tokens=300)
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.tool_calls and (parallel or len(choice.message.tool_calls) == 1)
    for call in choice.message.tool_calls:
        check_call(call, [WEATHER, TIME])


def test_named_function_streamed(client):
    chunks = list(client.chat.completions.create(
        model=MODEL_ID, messages=QUESTION, tools=[WEATHER, TIME], temperature=0, max_tokens=MAX_TOKENS, stream=True,
        tool_choice={"type": "function", "function": {"name": "get_time"}}, parallel_tool_calls=False))
    deltas = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
    assert deltas and deltas[0].id.startswith("call_") and deltas[0].function.name == "get_time"
    args = json.loads("".join(d.function.arguments or "" for d in deltas))
    assert isinstance(args["tz"], str)
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


@pytest.mark.parametrize("extra, param", [
    ({"tool_choice": {"type": "function", "function": {"name": "launch"}}}, "tool_choice"),
    ({"tool_choice": "sometimes"}, "tool_choice"),
    ({"tools": [{"type": "function", "function": {"name": "bad name"}}]}, "tools"),
    ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"s": {"type": "string", "not": {"const": "a"}}}}}}],
      "tool_choice": "required"}, "tools"),
    ({"tool_choice": "required", "response_format": {"type": "json_object"}}, "tool_choice"),
])
def test_bad_tool_requests_are_400s(client, server, extra, param):
    body = {"model": MODEL_ID, "messages": QUESTION, "tools": [WEATHER], "max_tokens": 4, **extra}
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(**body)
    assert e.value.status_code == 400
    assert e.value.body["param"] == param
    # and the server keeps serving
    assert client.chat.completions.create(model=MODEL_ID, messages=QUESTION, max_tokens=2).choices[0].message.content


@pytest.fixture(scope="module")
def hermes_client(tessera_bin, model_path):
    # The default model under Qwen 2.5's template: the hermes family, whose
    # template shows the tools itself and reads call arguments as objects.
    template = ROOT.parent / "shared" / "fixtures" / "chat_templates" / "Qwen-Qwen2.5-7B-Instruct.jinja"
    if not template.exists():
        pytest.skip(f"fixture template missing: {template}")
    srv = ServerProcess(tessera_bin, model_path, extra_args=["--chat-template", str(template)])
    yield openai.OpenAI(base_url=srv.base_url + "/v1", api_key="x", max_retries=0, timeout=120)
    assert srv.stop() == 0, srv.final_log


def test_hermes_template_takes_the_tool_history(hermes_client):
    history = QUESTION + [
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "call_1", "type": "function",
                         "function": {"name": "get_weather", "arguments": '{"location": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "21 C, sunny"},
    ]
    r = hermes_client.chat.completions.create(model=MODEL_ID, messages=history, tools=[WEATHER], temperature=0,
                                              max_tokens=16)
    assert r.choices[0].finish_reason in ("stop", "length", "tool_calls")
    plain = hermes_client.chat.completions.create(model=MODEL_ID, messages=history, temperature=0, max_tokens=1)
    assert r.usage.prompt_tokens > plain.usage.prompt_tokens  # the template listed the tool


def test_hermes_required_streamed_as_deltas(hermes_client):
    chunks = list(hermes_client.chat.completions.create(
        model=MODEL_ID, messages=QUESTION, tools=[WEATHER, TIME], temperature=0, max_tokens=MAX_TOKENS, stream=True,
        tool_choice="required", parallel_tool_calls=False))
    assert not "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)  # <tool_call> held back
    deltas = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
    assert deltas[0].function.name in ("get_weather", "get_time") and deltas[0].id.startswith("call_")
    json.loads("".join(d.function.arguments or "" for d in deltas))
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_raw_stream_deltas_are_openai_shaped(server):
    import httpx
    with httpx.stream("POST", server.base_url + "/v1/chat/completions", timeout=120, json={
            "model": MODEL_ID, "messages": QUESTION, "tools": [WEATHER], "temperature": 0,
            "max_tokens": MAX_TOKENS, "stream": True}) as resp:
        assert resp.status_code == 200
        events = sse_events(resp)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    finishes = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"][0]["finish_reason"]]
    assert len(finishes) == 1 and chunks[-1]["choices"][0]["finish_reason"] == finishes[0]
