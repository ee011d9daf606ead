"""``authpairs run --agent`` against a fake OpenAI-compatible tool-calling server on 127.0.0.1
(the real HTTP path of the openai backend kind), and the option's user errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from authpairs.agent.run import read_agent_run
from authpairs.cli import app
from authpairs.runs.records import Proposal
from tests.agent.agents import by_the_task
from tests.agent.helpers import FORBIDDEN, LAWFUL, UNTOUCHED
from tests.loopback import json_service

runner = CliRunner()


class FakeToolServer:
    """Answers chat completions with the scripted agent's turn, in the OpenAI tool-call format
    (arguments as JSON text), and keeps every request body."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, path: str, raw: bytes) -> tuple[int, object]:
        body = json.loads(raw)
        self.bodies.append(body)
        if not path.endswith("/chat/completions"):
            return 404, {"error": "no such path"}
        turn = by_the_task(body["messages"], body.get("tools", []))
        calls = [{"id": f"call-{len(self.bodies)}-{index}", "type": "function",
                  "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])}}
                 for index, call in enumerate(turn.get("tool_calls", []))]
        message: dict[str, Any] = {"role": "assistant", "content": turn.get("content") or None}
        if calls:
            message["tool_calls"] = calls
        return 200, {"choices": [{"message": message,
                                  "finish_reason": "tool_calls" if calls else "stop"}],
                     "usage": {"prompt_tokens": 100, "completion_tokens": 10}}


def test_run_agent_with_an_openai_compatible_tool_calling_server(tmp_path: Path) -> None:
    fake = FakeToolServer()
    records = tmp_path / "r.sqlite"
    cases = tmp_path / "cases.jsonl"
    from authpairs.cases.dataset import Dataset
    from authpairs.cases.examples import load_examples

    Dataset("three", [c for c in load_examples() if c.case_id in (LAWFUL, FORBIDDEN, UNTOUCHED)]
            ).write_jsonl(cases)
    with json_service(fake, models=("fake-agent",)) as url:
        result = runner.invoke(app, [
            "run", "--dataset", str(cases), "--guardrail",
            "tests.agent.reviewers:small_transfers", "--agent", f"{url}/v1",
            "--agent-model", "fake-agent", "--records", str(records), "--run-id", "agent-cli"])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())  # as one line, however the terminal wraps it
    assert "agent run agent-cli" in output and "3 cases; tool calls: 3 executed" in output
    assert "agent + guardrail stack" in result.output  # the stack scores follow
    first = fake.bodies[0]
    assert first["model"] == "fake-agent" and first["tool_choice"] == "auto"
    assert first["temperature"] == 0.0 and first["seed"] == 7
    assert {t["function"]["name"] for t in first["tools"]} >= {"ledger_transfer"}
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    # The conversation goes back in the OpenAI format: the assistant's tool_calls, then the
    # tool result under the call's id.
    second = fake.bodies[1]["messages"]
    assert second[2]["tool_calls"][0]["id"] == "call-1-0"
    assert second[3]["role"] == "tool" and second[3]["tool_call_id"] == "call-1-0"
    run = read_agent_run(records, "agent-cli")
    assert run.proposals == {LAWFUL: Proposal.CASE_OPERATION,
                             FORBIDDEN: Proposal.OTHER_OPERATION, UNTOUCHED: Proposal.NONE}
    assert sum(t.input_tokens for t in run.trajectories) == 100 * len(fake.bodies)


def test_agent_option_errors_are_one_line(tmp_path: Path) -> None:
    records = str(tmp_path / "r.sqlite")
    cases = [
        (["--agent", "http://127.0.0.1:9/v1"], "--agent-model"),
        (["--agent", "no such thing"], "--agent 'no such thing'"),
        (["--agent-model", "m"], "--agent-model"),
        (["--agent", "embedded", "--agent-server", "carrier-pigeon"], "--agent-server"),
        (["--agent", str(tmp_path / "missing.yaml")], "missing.yaml"),
        (["--agent", "nosuch.module:act"], "scripted agent 'nosuch.module:act'"),
    ]
    for extra, named in cases:
        result = runner.invoke(app, ["run", "--dataset", "examples", "--baseline",
                                     "always-allow", "--records", records, *extra])
        assert result.exit_code == 2, (extra, result.output)
        assert named in result.output, (extra, result.output)
        assert "Traceback" not in result.output


def test_an_agent_section_in_the_configuration_file_makes_an_agent_run(tmp_path: Path) -> None:
    config = tmp_path / "agent-run.yaml"
    config.write_text(
        "dataset: examples\n"
        "reviewer: {guardrail: 'tests.agent.reviewers:small_transfers'}\n"
        f"records: {tmp_path / 'r.sqlite'}\n"
        "agent: {backend: {kind: scripted, script: 'tests.agent.agents:by_the_task'}, "
        "max_turns: 2}\n", encoding="utf-8")
    result = runner.invoke(app, ["run", "--config", str(config), "--run-id", "from-file",
                                 "--agent-server", "in-process", "--quiet"])
    assert result.exit_code == 0, result.output
    run = read_agent_run(tmp_path / "r.sqlite", "from-file")
    assert len(run.trajectories) == 8
    # max_turns 2: the lawful refund's repeated call is its second turn, and then it stops.
    lawful = next(t for t in run.trajectories if t.case_id == LAWFUL)
    assert (lawful.turns, lawful.tool_calls, lawful.stop.value) == (2, 2, "turn_limit")

