# LangChain against `tessera serve` (langchain-openai, pinned in
# requirements-test.txt): bind_tools, the tool result replayed for an answer,
# and with_structured_output through function calling. Skipped when the
# package is not installed.
import pydantic
import pytest

from server_fixture import MODEL_ID, ServerProcess

langchain_openai = pytest.importorskip("langchain_openai")
messages = pytest.importorskip("langchain_core.messages")


class GetWeather(pydantic.BaseModel):
    """Get the current weather in a city."""
    location: str = pydantic.Field(description="City name", max_length=30)


@pytest.fixture(scope="module")
def server(tessera_bin, model_path):
    srv = ServerProcess(tessera_bin, model_path)
    yield srv
    assert srv.stop() == 0, srv.final_log


@pytest.fixture(scope="module")
def llm(server):
    return langchain_openai.ChatOpenAI(base_url=server.base_url + "/v1", api_key="x", model=MODEL_ID,
                                       temperature=0, max_tokens=60, max_retries=0, timeout=120)


def test_bind_tools_answers(llm):
    reply = llm.bind_tools([GetWeather]).invoke("What is the weather in Paris?")
    assert isinstance(reply, messages.AIMessage)
    for call in reply.tool_calls:
        assert call["name"] == "GetWeather" and isinstance(call["args"]["location"], str)
    assert reply.tool_calls or reply.content


def test_tool_message_replayed_for_a_final_answer(llm):
    call = {"name": "GetWeather", "args": {"location": "Paris"}, "id": "call_abc", "type": "tool_call"}
    history = [messages.HumanMessage("What is the weather in Paris?"),
               messages.AIMessage(content="", tool_calls=[call]),
               messages.ToolMessage(content="21 C and sunny", tool_call_id="call_abc")]
    reply = llm.bind_tools([GetWeather]).invoke(history)
    assert isinstance(reply, messages.AIMessage)
    assert reply.content or reply.tool_calls


def test_bind_tools_with_a_forced_tool(llm):
    reply = llm.bind_tools([GetWeather], tool_choice="GetWeather").invoke("Weather in Oslo?")
    assert reply.tool_calls and reply.tool_calls[0]["name"] == "GetWeather"
    assert isinstance(reply.tool_calls[0]["args"]["location"], str)


def test_with_structured_output_by_function_calling(llm):
    result = llm.with_structured_output(GetWeather, method="function_calling").invoke("Weather in Rome?")
    assert isinstance(result, GetWeather) and len(result.location) <= 30
