"""The agent's tool formats: ``native`` (OpenAI ``tools``) and ``json_schema`` (the tools in the
system message, each turn constrained to one JSON step by ``response_format``): the request body
a fake OpenAI-compatible server receives, how its replies become tool calls and answers, a reply
cut at ``max_tokens``, the history sent back, the configuration and its identity, and a whole
agent run in the json_schema format through the MCP server (records audit clean)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from authpairs.agent.audit import audit_run
from authpairs.agent.runner import AgentLoop
from authpairs.agent.trajectory import StopReason
from authpairs.backends.config import LocalBackendConfig, SamplingConfig
from authpairs.backends.openai_http import OpenAIBackend
from authpairs.backends.tool_chat import (
    STEP_INSTRUCTIONS,
    HTTPToolChat,
    LocalToolChat,
    ToolCall,
    ToolChatResponse,
    make_tool_chat,
    parse_step,
    render_step_messages,
    step_schema,
    step_system_text,
)
from authpairs.errors import ConfigError
from authpairs.runs.agent_config import AgentModelConfig
from authpairs.runs.config import config_from_dict
from authpairs.runs.store import RecordStore

TRANSFER: dict[str, Any] = {"type": "function", "function": {
    "name": "ledger_transfer", "description": "Move money between accounts.",
    "parameters": {"type": "object", "additionalProperties": False,
                   "properties": {"from_account": {"title": "From Account", "type": "string"},
                                  "amount": {"title": "Amount", "type": "string"}},
                   "required": ["from_account", "amount"]}}}
UPDATE: dict[str, Any] = {"type": "function", "function": {
    "name": "record_update", "description": "Change one field of a record.",
    "parameters": {"type": "object", "properties": {"where": {"$ref": "#/$defs/Where"}},
                   "$defs": {"Where": {"type": "object",
                                       "properties": {"id": {"$ref": "#/$defs/Id"}}},
                             "Id": {"type": "string"}}}}}
TOOLS = [TRANSFER, UPDATE]
SAMPLING = SamplingConfig(temperature=0.0, seed=7, max_tokens=64)


def _completion(content: str | None, finish: str = "stop") -> dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", "content": content},
                         "finish_reason": finish}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 9}}


def _fake_server(replies: list[dict[str, Any]], sent: list[dict[str, Any]]
                 ) -> Callable[[httpx.Request], httpx.Response]:
    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=replies[min(len(sent), len(replies)) - 1])
    return handle


def _chat(replies: list[dict[str, Any]], sent: list[dict[str, Any]],
          tool_format: Any = "json_schema") -> HTTPToolChat:
    backend = OpenAIBackend(["http://agent.test/v1"], "m",
                            transport=httpx.MockTransport(_fake_server(replies, sent)))
    return HTTPToolChat(backend, tool_format=tool_format)


def test_the_step_schema_is_a_call_of_each_tool_or_an_answer() -> None:
    schema = step_schema(TOOLS)
    transfer, update, answer = schema["oneOf"]
    assert transfer == {"type": "object", "additionalProperties": False,
                        "required": ["tool", "arguments"],
                        "properties": {"tool": {"const": "ledger_transfer"},
                                       "arguments": TRANSFER["function"]["parameters"]}}
    assert answer["properties"] == {"answer": {"type": "string"}}
    assert answer["required"] == ["answer"] and answer["additionalProperties"] is False
    # A tool's $defs move to the top, renamed, and its references follow them.
    assert "$defs" not in update["properties"]["arguments"]
    assert update["properties"]["arguments"]["properties"]["where"] == {
        "$ref": "#/$defs/record_update__Where"}
    assert schema["$defs"] == {
        "record_update__Where": {"type": "object",
                                 "properties": {"id": {"$ref": "#/$defs/record_update__Id"}}},
        "record_update__Id": {"type": "string"}}
    assert step_schema([])["oneOf"] == [answer]


def test_the_system_text_lists_each_tool_and_the_step_instruction() -> None:
    text = step_system_text(TOOLS)
    assert text.startswith("You have these tools:\n- ledger_transfer: Move money between "
                           "accounts.\n  parameters: {")
    assert '"from_account":{"type":"string"}' in text and "title" not in text
    assert "- record_update: Change one field of a record." in text
    assert text.endswith(STEP_INSTRUCTIONS)


async def test_a_json_schema_request_carries_the_schema_and_the_tools_text() -> None:
    sent: list[dict[str, Any]] = []
    step = {"tool": "ledger_transfer", "arguments": {"from_account": "A-1", "amount": "40.00"}}
    async with _chat([_completion(json.dumps(step))], sent) as chat:
        reply = await chat.chat([{"role": "system", "content": "Be careful."},
                                 {"role": "user", "content": "Transfer 40.00 from A-1."}],
                                TOOLS, SAMPLING)
    (body,) = sent
    assert "tools" not in body and "tool_choice" not in body
    assert body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "step", "schema": step_schema(TOOLS)}}
    assert body["messages"] == [
        {"role": "system", "content": "Be careful.\n\n" + step_system_text(TOOLS)},
        {"role": "user", "content": "Transfer 40.00 from A-1."}]
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("m", 0.0, 64)
    assert reply.tool_calls == [ToolCall(id="call_0", name="ledger_transfer", arguments=json.dumps(
        {"amount": "40.00", "from_account": "A-1"}))]
    assert reply.text is None and reply.format_error is None
    assert (reply.input_tokens, reply.output_tokens) == (100, 9)
    assert chat.describe()["tool_format"] == "json_schema"


async def test_the_native_format_is_unchanged() -> None:
    sent: list[dict[str, Any]] = []
    async with _chat([_completion("done")], sent, tool_format="native") as chat:
        reply = await chat.chat([{"role": "user", "content": "go"}], TOOLS, SAMPLING)
    (body,) = sent
    assert body["tools"] == TOOLS and body["tool_choice"] == "auto"
    assert "response_format" not in body and body["messages"] == [
        {"role": "user", "content": "go"}]
    assert reply.text == "done" and not reply.tool_calls and reply.format_error is None
    assert chat.describe()["tool_format"] == "native"


@pytest.mark.parametrize(("text", "finish", "error"), [
    ('{"tool": "ledger_transfer", "arguments": {"from_account": "A-', "length",
     "the reply is not JSON (cut at max_tokens)"),
    ("", "length", "the reply is an empty reply (cut at max_tokens)"),
    (None, "stop", "the reply is an empty reply"),
    ("I will transfer the money.", "stop", "the reply is not JSON"),
    ('{"tool": "ledger_transfer", "arguments": "A-1"}', "stop", "the reply is neither"),
    ('{"tool": "ledger_transfer", "arguments": {}, "answer": "x"}', "stop", "the reply is neither"),
    ('{"answer": 3}', "stop", "the reply is neither"),
    ('["ledger_transfer"]', "stop", "the reply is neither"),
])
def test_a_reply_that_is_not_a_step_is_a_format_error(text: str | None, finish: str,
                                                      error: str) -> None:
    reply = parse_step(ToolChatResponse(text=text, finish_reason=finish, output_tokens=64))
    assert reply.format_error is not None and reply.format_error.startswith(error)
    assert not reply.tool_calls and reply.text == text
    assert (reply.finish_reason, reply.output_tokens) == (finish, 64)


def test_an_answer_step_is_an_answer() -> None:
    reply = parse_step(ToolChatResponse(text='{"answer": "The policy forbids it."}'))
    assert reply.text == "The policy forbids it." and not reply.tool_calls
    assert reply.format_error is None


def test_the_history_renders_calls_as_steps_and_results_as_user_messages() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "S"}, {"role": "user", "content": "task"},
        {"role": "assistant", "content": "", "tool_calls": [
            ToolCall(id="c1", name="ledger_transfer",
                     arguments='{"amount": "1.00"}').as_message_part(),
            ToolCall(id="c2", name="record_update", arguments="{cut").as_message_part()]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"status": "executed"}'},
        {"role": "tool", "tool_call_id": "c2", "content": '{"status": "malformed"}'},
        {"role": "assistant", "content": "not a step"},
        {"role": "user", "content": '{"status": "malformed"}'}]
    rendered = render_step_messages(messages, TOOLS)
    assert rendered == [
        {"role": "system", "content": "S\n\n" + step_system_text(TOOLS)},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": '{"tool": "ledger_transfer", "arguments": '
                                         '{"amount": "1.00"}}\n{cut'},
        {"role": "user", "content": 'Result of ledger_transfer: {"status": "executed"}\n'
                                    'Result of record_update: {"status": "malformed"}'},
        {"role": "assistant", "content": "not a step"},
        {"role": "user", "content": '{"status": "malformed"}'}]
    assert messages[3]["role"] == "tool"  # the conversation itself is left as it was
    without_system = render_step_messages([{"role": "user", "content": "task"}], [TRANSFER])
    assert without_system[0] == {"role": "system", "content": step_system_text([TRANSFER])}


def test_the_tool_format_setting_and_its_identity() -> None:
    base = {"dataset": "examples", "reviewer": {"baseline": "always-allow"}}
    served = {"kind": "openai", "base_urls": ["http://h:1/v1"], "model": "m"}
    plain = config_from_dict({**base, "agent": {"backend": served}})
    auto = config_from_dict({**base, "agent": {"backend": served, "tool_format": "auto"}})
    steps = config_from_dict({**base, "agent": {"backend": served,
                                                "tool_format": "json_schema"}})
    native = config_from_dict({**base, "agent": {"backend": served, "tool_format": "native"}})
    assert plain.agent is not None and plain.agent.tool_format == "auto"
    assert "tool_format" not in plain.identity()["agent"]  # earlier agent run ids stay
    assert plain.sha256() == auto.sha256()
    assert len({plain.sha256(), steps.sha256(), native.sha256()}) == 3
    assert steps.identity()["agent"]["tool_format"] == "json_schema"
    with pytest.raises(ConfigError, match="tool_format"):
        config_from_dict({**base, "agent": {"backend": served, "tool_format": "hermes"}})
    with pytest.raises(ConfigError, match="scripted agent takes the tools natively"):
        config_from_dict({**base, "agent": {"backend": {"kind": "scripted", "script": "m:f"},
                                            "tool_format": "json_schema"}})


def test_make_tool_chat_resolves_the_format_per_kind() -> None:
    served = AgentModelConfig.model_validate(
        {"backend": {"kind": "openai", "base_urls": ["http://h:1/v1"], "model": "m"}})
    chat = make_tool_chat(served.backend)
    assert isinstance(chat, HTTPToolChat) and chat.tool_format == "native"
    chat = make_tool_chat(served.backend, "json_schema")
    assert isinstance(chat, HTTPToolChat) and chat.tool_format == "json_schema"
    local = make_tool_chat(LocalBackendConfig(n_parallel=1))
    assert isinstance(local, LocalToolChat) and local.tool_format == "auto"
    with pytest.raises(ConfigError, match="unknown tool format"):
        make_tool_chat(served.backend, "hermes")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="natively"):
        make_tool_chat(AgentModelConfig.model_validate(
            {"backend": {"kind": "scripted", "script": "tests.agent.agents:stubborn"}}).backend,
            "json_schema")


REFUND_CASE = "EX-c64055c2cb7187da"
REFUND = {"from_account": "merchant-ops", "to_account": "card-4471", "amount": "75.00",
          "currency": "USD"}


async def test_an_agent_run_in_the_json_schema_format(tmp_path: Path) -> None:
    """The loop over the MCP server with a fake model server in the json_schema format: a cut
    reply (counted as malformed, nothing sent), then the case's own operation as a JSON step
    (reviewed, executed, recorded), then an answer; the trajectory keeps the OpenAI-shaped
    conversation and the records audit clean."""
    from mcp import Client

    from authpairs.agent.serve import open_session, select_cases
    from authpairs.agent.server import build_server
    from authpairs.runs.records import stored_json

    sent: list[dict[str, Any]] = []
    replies = [_completion('{"tool": "ledger_transfer", "arguments": {"from_', "length"),
               _completion(json.dumps({"tool": "ledger_transfer", "arguments": REFUND})),
               _completion(json.dumps({"answer": "Refunded."}))]
    records = tmp_path / "r.sqlite"
    config = config_from_dict({
        "dataset": "examples", "reviewer": {"baseline": "always-allow"},
        "records": str(records), "run_id": "agent-steps",
        "agent": {"backend": {"kind": "openai", "base_urls": ["http://agent.test/v1"],
                              "model": "m"}, "tool_format": "json_schema", "max_turns": 4}})
    assert config.agent is not None
    cases = select_cases(config, [REFUND_CASE])
    chat = _chat(replies, sent)
    async with (chat,
                open_session(config, cases, "agent-steps", "in-process",
                             agent_model=chat.describe()) as session,
                Client(build_server(session)) as client):
        loop = AgentLoop(client, chat, config.agent, run_id="agent-steps")
        trajectory = await loop.run_case(REFUND_CASE)
        session.store.add_agent_trajectory("agent-steps", REFUND_CASE, stored_json(trajectory))
    assert (trajectory.turns, trajectory.tool_calls, trajectory.malformed_calls) == (3, 1, 1)
    assert trajectory.stop is StopReason.ANSWERED
    roles = [m["role"] for m in trajectory.messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "tool", "assistant"]
    assert json.loads(trajectory.messages[3]["content"])["status"] == "malformed"
    assert trajectory.messages[4]["tool_calls"][0]["function"]["name"] == "ledger_transfer"
    assert trajectory.messages[-1]["content"] == "Refunded."
    # What the model was sent on its last turn: its steps and the results, no tool roles.
    last = sent[-1]["messages"]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "user", "assistant",
                                         "user"]
    assert json.loads(last[4]["content"]) == {"tool": "ledger_transfer", "arguments": REFUND}
    prefix = "Result of ledger_transfer: "
    assert last[5]["content"].startswith(prefix)
    assert json.loads(last[5]["content"][len(prefix):])["status"] == "executed"
    assert all(body["response_format"]["json_schema"]["name"] == "step" for body in sent)
    with RecordStore(records, readonly=True) as store:
        (call,) = store.agent_calls("agent-steps")
        report = audit_run(store, "agent-steps")
        info = store.get_run("agent-steps")
    assert (call.tool, call.arguments, call.proposal.value, call.result.value) == (
        "ledger_transfer", REFUND, "case_operation", "executed")
    assert report.ok, [str(finding) for finding in report.findings]
    assert info is not None and info.config["agent"]["model"]["tool_format"] == "json_schema"


@pytest.mark.parametrize(("requested", "renders", "chosen"), [
    ("auto", False, "json_schema"), ("auto", True, "native"), ("auto", None, "native"),
    ("native", False, "native"), ("json_schema", True, "json_schema")])
async def test_the_embedded_server_resolves_auto_by_its_template(
        monkeypatch: pytest.MonkeyPatch, requested: Any, renders: bool | None,
        chosen: str) -> None:
    """``auto`` on the embedded server: json_schema exactly when ``/props`` says the template
    renders no tools; an explicit format is kept. (The server process is replaced by a fake
    OpenAI-compatible endpoint.)"""
    from authpairs.backends.local_server import LocalServerBackend

    sent: list[dict[str, Any]] = []

    async def start(server: LocalServerBackend) -> LocalServerBackend:
        server._client = OpenAIBackend(  # the fake stands in for the process
            ["http://local.test/v1"], "m",
            transport=httpx.MockTransport(_fake_server([_completion('{"answer": "no"}')],
                                                       sent)))
        return server

    async def stop(server: LocalServerBackend, *exc: object) -> None:
        server._client = None

    async def renders_tools(chat: LocalToolChat) -> bool | None:
        return renders

    monkeypatch.setattr(LocalServerBackend, "__aenter__", start)
    monkeypatch.setattr(LocalServerBackend, "__aexit__", stop)
    monkeypatch.setattr(LocalToolChat, "_template_renders_tools", renders_tools)
    chat = LocalToolChat(LocalBackendConfig(n_parallel=1), requested)
    assert chat.tool_format == requested
    async with chat:
        assert chat.tool_format == chosen and chat.supports_tools is renders
        await chat.chat([{"role": "user", "content": "task"}], TOOLS, SAMPLING)
    (body,) = sent
    assert ("response_format" in body) is (chosen == "json_schema")
    assert ("tools" in body) is (chosen == "native")
