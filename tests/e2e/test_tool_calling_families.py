# Tool calling for the families that write a function's name outside its
# JSON arguments (DeepSeek, Functionary v3.1 and v3.2), end to end with the
# official openai client: the default model served under each family's
# template, tool_choice "required" and a named function constrain decoding to
# that family's call syntax, and the text comes back as message.tool_calls and
# as streamed tool-call deltas. The Functionary templates are small ones in
# their shape written for these tests (tests/e2e/templates/); DeepSeek's is
# the shared fixture, gpt-oss's (harmony: calls are messages to=functions.NAME
# on the commentary channel) llama.cpp's own. A tiny model whose [TOOL_CALLS] is a control token
# shows the marker emitted as that one token.
import json
import os
import pathlib
import subprocess
import sys

import openai
import pytest

from server_fixture import MODEL_ID, ServerProcess

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEMPLATES = {
    "deepseek": ROOT.parent / "shared" / "fixtures" / "chat_templates" / "deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja",
    "functionary-v3.1": ROOT / "tests" / "e2e" / "templates" / "functionary_v31.jinja",
    "functionary-v3.2": ROOT / "tests" / "e2e" / "templates" / "functionary_v32.jinja",
    # gpt-oss's harmony format (llama.cpp's copy, fetched by tools/fetch_vocab_suite.sh).
    "harmony": ROOT / "models" / "ggml-vocab" / "openai-gpt-oss-120b.jinja",
}
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather in a city.",
    "parameters": {"type": "object", "properties": {"location": {"type": "string", "maxLength": 30}},
                   "required": ["location"]}}}
TIME = {"type": "function", "function": {
    "name": "get_time", "description": "Current time in a time zone.",
    "parameters": {"type": "object", "properties": {"tz": {"type": "string", "maxLength": 20}}, "required": ["tz"]}}}
QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]


@pytest.fixture(scope="module", params=sorted(TEMPLATES))
def family_client(request, tessera_bin, model_path):
    template = TEMPLATES[request.param]
    if not template.exists():
        if os.environ.get("CI"):
            pytest.fail(f"CI must have {template} (tools/fetch_vocab_suite.sh)")
        pytest.skip(f"template missing: {template}")
    srv = ServerProcess(tessera_bin, model_path, extra_args=["--chat-template", str(template)])
    yield openai.OpenAI(base_url=srv.base_url + "/v1", api_key="x", max_retries=0, timeout=120)
    assert srv.stop() == 0, srv.final_log


def check_args(name, arguments):
    schema = {t["function"]["name"]: t["function"]["parameters"] for t in (WEATHER, TIME)}[name]
    args = json.loads(arguments)
    assert set(args) == set(schema["required"])
    for key, value in args.items():
        assert isinstance(value, str) and len(value) <= schema["properties"][key]["maxLength"]


def test_required_gives_parsed_calls(family_client):
    r = family_client.chat.completions.create(model=MODEL_ID, messages=QUESTION, tools=[WEATHER, TIME], temperature=0,
                                              tool_choice="required", max_tokens=300)
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls", choice.message.content
    assert choice.message.tool_calls
    for call in choice.message.tool_calls:
        assert call.id.startswith("call_") and call.type == "function"
        check_args(call.function.name, call.function.arguments)


def test_named_function_streamed_as_deltas(family_client):
    # Room for the call: SmolLM2's vocabulary spells each DeepSeek marker in many byte tokens.
    chunks = list(family_client.chat.completions.create(
        model=MODEL_ID, messages=QUESTION, tools=[WEATHER, TIME], temperature=0, max_tokens=300, stream=True,
        tool_choice={"type": "function", "function": {"name": "get_time"}}, parallel_tool_calls=False))
    assert not "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)  # the call's text held back
    deltas = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
    assert deltas and deltas[0].function.name == "get_time" and deltas[0].id.startswith("call_")
    check_args("get_time", "".join(d.function.arguments or "" for d in deltas))
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_tool_result_comes_back(family_client):
    history = QUESTION + [
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "call_1", "type": "function",
                         "function": {"name": "get_weather", "arguments": '{"location": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "21 C, sunny"},
    ]
    r = family_client.chat.completions.create(model=MODEL_ID, messages=history, tools=[WEATHER], temperature=0,
                                              max_tokens=16)
    assert r.choices[0].finish_reason in ("stop", "length", "tool_calls")


@pytest.fixture(scope="module")
def mistral_marker_server(tmp_path_factory, tessera_bin):
    # A tiny random-weight model whose vocabulary holds [TOOL_CALLS] as a
    # control token, as Mistral's does, under a short Mistral-shaped template
    # (the model's context is 128 tokens).
    template = ROOT / "tests" / "e2e" / "templates" / "mistral_tiny.jinja"
    path = tmp_path_factory.mktemp("marker") / "tiny.gguf"
    subprocess.run([sys.executable, str(ROOT / "tools" / "make_tiny_model.py"), "--out", str(path),
                    "--variant", "gqa", "--control-token", "[TOOL_CALLS]"], check=True)
    srv = ServerProcess(tessera_bin, str(path), ["--chat-template", str(template)])
    yield srv
    assert srv.stop() == 0, srv.final_log


def test_control_token_marker_opens_a_forced_call(mistral_marker_server):
    sys.path.insert(0, str(ROOT / "tools"))
    import make_tiny_model as tiny
    marker_id = tiny.vocab(("[TOOL_CALLS]",))[0].index("[TOOL_CALLS]")
    client = openai.OpenAI(base_url=mistral_marker_server.base_url + "/v1", api_key="x", max_retries=0, timeout=120)
    # The bias makes the marker token win wherever the mask lets it through;
    # masks never allow control tokens unless the request names them.
    # (The text stays admitted inside the tz string too, so there the bias
    # writes it as well.)
    r = client.chat.completions.create(model=MODEL_ID, messages=[{"role": "user", "content": "Time?"}],
                                       tools=[TIME], temperature=0,
                                       tool_choice={"type": "function", "function": {"name": "get_time"}},
                                       parallel_tool_calls=False, max_tokens=66, logprobs=True,
                                       logit_bias={str(marker_id): 100})
    choice = r.choices[0]
    assert choice.logprobs.content[0].token == "[TOOL_CALLS]"  # one token, not the text spelled in bytes
    assert choice.finish_reason == "tool_calls", choice.message.content
    assert [c.function.name for c in choice.message.tool_calls] == ["get_time"]
    assert isinstance(json.loads(choice.message.tool_calls[0].function.arguments)["tz"], str)
