"""The agent's model seam: the ``--agent`` shorthand and the ``agent:`` section, the run identity,
and the tool-calling chat over OpenAI-compatible HTTP (request body, reply parsing, errors)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from authpairs.backends.config import SamplingConfig
from authpairs.backends.openai_http import OpenAIBackend
from authpairs.backends.tool_chat import (
    HTTPToolChat,
    ScriptedToolChat,
    ToolCall,
    ToolChatResponse,
    make_tool_chat,
    parse_tool_completion,
)
from authpairs.errors import BackendError, ConfigError, TransportError
from authpairs.runs.agent_config import AgentModelConfig, agent_from_spec
from authpairs.runs.config import config_from_dict


def test_the_agent_shorthand(tmp_path: Path) -> None:
    embedded = agent_from_spec("embedded")
    assert embedded.backend.kind == "local" and embedded.sampling.max_tokens == 512
    served = agent_from_spec("http://127.0.0.1:8000/v1", "Qwen/Qwen3-8B")
    assert served.backend.kind == "openai"
    assert served.backend.model_dump()["base_urls"] == ["http://127.0.0.1:8000/v1"]
    scripted = agent_from_spec("tests.agent.agents:by_the_task")
    assert scripted.backend.model_dump()["script"] == "tests.agent.agents:by_the_task"
    path = tmp_path / "agent.yaml"
    path.write_text("backend: {kind: openai, base_urls: ['http://h:1/v1'], model: m}\n"
                    "max_turns: 3\n", encoding="utf-8")
    assert agent_from_spec(str(path)).max_turns == 3
    path.write_text("max_turns: 0\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="field 'max_turns'"):
        agent_from_spec(str(path))
    with pytest.raises(ConfigError, match="--agent-model"):
        agent_from_spec("http://127.0.0.1:8000/v1")
    with pytest.raises(ConfigError, match="expected 'embedded'"):
        agent_from_spec("gpt")


def test_the_agent_section_is_in_the_identity_only_when_given() -> None:
    base = {"dataset": "examples", "reviewer": {"baseline": "always-allow"}}
    plain = config_from_dict(base)
    assert "agent" not in plain.identity()
    agent = config_from_dict({**base, "agent": {"backend": {"kind": "scripted",
                                                            "script": "m:f"}}})
    other = config_from_dict({**base, "agent": {"backend": {"kind": "scripted",
                                                            "script": "m:f"}, "max_turns": 2}})
    assert len({plain.sha256(), agent.sha256(), other.sha256()}) == 3
    with pytest.raises(ConfigError, match="cannot act as an agent"):
        config_from_dict({**base, "agent": {"backend": {"kind": "replay", "store": "x",
                                                        "run_id": "r"}}})


def _reply(message: dict[str, Any]) -> dict[str, Any]:
    return {"choices": [{"message": message, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3}}


async def test_the_http_chat_sends_tools_and_reads_tool_calls() -> None:
    sent: list[dict[str, Any]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=_reply({"content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "ledger_transfer", "arguments": '{"amount": "1.00"}'}},
            {"type": "function", "function": {"name": "record_update",
                                              "arguments": {"field": "email"}}}]}))

    backend = OpenAIBackend(["http://agent.test/v1"], "m", extra_body={"top_k": 5},
                            param_names={"repetition_penalty": "repeat_penalty"},
                            transport=httpx.MockTransport(handle))
    tools = [{"type": "function", "function": {"name": "ledger_transfer", "parameters": {}}}]
    async with HTTPToolChat(backend) as chat:
        reply = await chat.chat([{"role": "user", "content": "go"}], tools,
                                SamplingConfig(temperature=0.0, seed=7, max_tokens=64,
                                               repetition_penalty=1.1))
    (body,) = sent
    assert body["tools"] == tools and body["tool_choice"] == "auto"
    assert body["messages"] == [{"role": "user", "content": "go"}]
    assert (body["model"], body["seed"], body["max_tokens"], body["top_k"]) == ("m", 7, 64, 5)
    assert body["repeat_penalty"] == 1.1 and "repetition_penalty" not in body
    assert reply.tool_calls == [ToolCall(id="c1", name="ledger_transfer",
                                         arguments='{"amount": "1.00"}'),
                                ToolCall(id="call_1", name="record_update",
                                         arguments='{"field": "email"}')]
    assert (reply.input_tokens, reply.output_tokens) == (12, 3)
    assert reply.as_message()["tool_calls"][0] == {
        "id": "c1", "type": "function",
        "function": {"name": "ledger_transfer", "arguments": '{"amount": "1.00"}'}}


@pytest.mark.parametrize(("body", "problem"), [
    ([], "top level"),
    ({"choices": []}, "'choices'"),
    ({"choices": [{"message": None}]}, "message is null"),
    ({"choices": [{"message": {"content": ["x"]}}]}, "not a string"),
    ({"choices": [{"message": {"tool_calls": {"a": 1}}}]}, "not a list"),
    ({"choices": [{"message": {"tool_calls": [{"function": {}}]}}]}, "no function name"),
])
def test_a_malformed_reply_is_a_transport_error(body: object, problem: str) -> None:
    with pytest.raises(TransportError, match=problem):
        parse_tool_completion(body)


async def test_http_errors_follow_the_backend_rules() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        status = 503 if "busy" in str(request.url) else 400
        return httpx.Response(status, text="no", headers={"retry-after": "2"})

    for url, error in (("http://busy.test/v1", TransportError),
                       ("http://bad.test/v1", BackendError)):
        chat = HTTPToolChat(OpenAIBackend([url], "m", transport=httpx.MockTransport(handle)))
        async with chat:
            with pytest.raises(error) as raised:
                await chat.chat([], [], SamplingConfig())
        if error is TransportError:
            assert getattr(raised.value, "retry_after", None) == 2.0


async def test_scripted_replies() -> None:
    chat = make_tool_chat(AgentModelConfig.model_validate(
        {"backend": {"kind": "scripted", "script": "tests.agent.agents:stubborn"}}).backend)
    assert isinstance(chat, ScriptedToolChat)
    async with chat:
        reply = await chat.chat([{"role": "user", "content": "x"}], [], SamplingConfig())
    assert reply == ToolChatResponse(tool_calls=[ToolCall(id="call_0", name="ledger_transfer",
                                                          arguments="{not json")],
                                     text="", finish_reason="tool_calls")
    odd = ScriptedToolChat(lambda messages, tools: 42, "odd")
    with pytest.raises(BackendError, match="must be a mapping"):
        await odd.chat([], [], SamplingConfig())
