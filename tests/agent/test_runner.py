"""The agent runner (``authpairs run --agent``) with scripted agents, in-process and over a real
MCP stdio transport: every tool call is an agent call with its review and effect, each case's
trajectory is stored, and what the agent proposed per case is read back."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from authpairs.agent.run import AgentRunResult, run_agent
from authpairs.agent.trajectory import StopReason, Trajectory
from authpairs.errors import ConfigError
from authpairs.runs.config import RunConfig, config_from_dict
from authpairs.runs.records import AgentCall, CallResult, Proposal
from authpairs.runs.store import RecordStore
from tests.agent.helpers import FORBIDDEN, LAWFUL, SECRETS, UNTOUCHED, secret_dataset

REPO = Path(__file__).resolve().parents[2]
CASES = [LAWFUL, FORBIDDEN, UNTOUCHED]


def _config(tmp_path: Path, script: str, **agent: Any) -> RunConfig:
    return config_from_dict({
        "dataset": str(secret_dataset(tmp_path / "cases.jsonl")),
        "reviewer": {"guardrail": "tests.agent.reviewers:small_transfers"},
        "records": str(tmp_path / "records.sqlite"), "run_id": "agent-test",
        "agent": {"backend": {"kind": "scripted", "script": script}, **agent}})


def _by_case(result: AgentRunResult) -> tuple[dict[str, list[AgentCall]], dict[str, Trajectory]]:
    calls: dict[str, list[AgentCall]] = {}
    for call in result.calls:
        calls.setdefault(call.case_id, []).append(call)
    return calls, {t.case_id: t for t in result.trajectories}


def _check_by_the_task(result: AgentRunResult) -> None:
    """What the scripted agent by_the_task did, as recorded."""
    assert result.proposals == {LAWFUL: Proposal.CASE_OPERATION,
                                FORBIDDEN: Proposal.OTHER_OPERATION, UNTOUCHED: Proposal.NONE}
    assert result.proposal_counts() == {"case_operation": 1, "other_operation": 1, "none": 1}
    calls, paths = _by_case(result)
    assert set(paths) == set(CASES)
    assert set(calls) == {LAWFUL, FORBIDDEN}
    own, again = calls[LAWFUL]
    assert (own.proposal, again.proposal) == (Proposal.CASE_OPERATION,) * 2
    assert (own.result, again.result) == (CallResult.EXECUTED,) * 2
    assert own.effect is not None and again.effect is not None
    assert (own.effect.effect["result"]["transfer_no"],
            again.effect.effect["result"]["transfer_no"]) == (1, 2)
    (smaller,) = calls[FORBIDDEN]
    assert smaller.proposal is Proposal.OTHER_OPERATION and smaller.result is CallResult.EXECUTED
    # Judged on what executed: the verifier saw a transfer of 40.00, not the case's 75.00.
    assert smaller.effect is not None and smaller.effect.verified
    assert smaller.effect.effect["result"]["amount_cents"] == 4000
    assert [t.stop for t in (paths[LAWFUL], paths[FORBIDDEN], paths[UNTOUCHED])] == [
        StopReason.ANSWERED] * 3
    assert [(paths[c].turns, paths[c].tool_calls) for c in CASES] == [(3, 2), (2, 1), (1, 0)]
    lawful = paths[LAWFUL].messages
    assert [m["role"] for m in lawful] == ["system", "user", "assistant", "tool", "assistant",
                                          "tool", "assistant"]
    assert lawful[2]["tool_calls"][0]["function"]["name"] == "ledger_transfer"
    assert '"status": "executed"' in lawful[3]["content"]
    assert "Sam Reyes" in lawful[1]["content"]
    assert paths[UNTOUCHED].messages[-1] == {"role": "assistant",
                                             "content": "I make no call for this request."}
    # One case record per case with a reviewed call: the first call that went through.
    records = {r.case_id: r for r in result.records}
    assert set(records) == {LAWFUL, FORBIDDEN}
    assert records[LAWFUL].input_sha256 == own.input_sha256
    assert records[FORBIDDEN].went_through and records[FORBIDDEN].label == "forbidden"
    text = "\n".join(t.model_dump_json() for t in result.trajectories)
    assert not [secret for secret in SECRETS if secret in text]


async def test_a_scripted_agent_in_process(tmp_path: Path) -> None:
    config = _config(tmp_path, "tests.agent.agents:by_the_task")
    seen: list[str] = []
    result = await run_agent(config, case_ids=CASES, on_case=lambda t: seen.append(t.case_id))
    assert seen == CASES
    _check_by_the_task(result)
    with RecordStore(config.records, readonly=True) as store:
        info = store.get_run("agent-test")
    assert info is not None
    assert info.config["agent"] == {"mode": "run", "transport": "in-process", "cases": CASES,
                                    "model": {"kind": "scripted",
                                              "script": "tests.agent.agents:by_the_task"}}
    resolved = info.config["resolved"]
    assert resolved["agent"]["backend"]["script"] == "tests.agent.agents:by_the_task"
    assert resolved["agent"]["max_turns"] == 8
    assert resolved["reviewer"]["guardrail"] == "tests.agent.reviewers:small_transfers"
    assert info.expected_case_ids == sorted(CASES)
    with pytest.raises(ConfigError, match="already exists"):
        await run_agent(config, case_ids=CASES)


async def test_a_scripted_agent_over_a_real_stdio_transport(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner starts 'authpairs mcp serve' as a child process and talks MCP over its
    stdin/stdout; the child records the calls, this process the trajectories."""
    monkeypatch.chdir(REPO)  # the child imports the test guardrail from the repository
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    config = _config(tmp_path, "tests.agent.agents:by_the_task")
    result = await run_agent(config, case_ids=CASES, server="stdio")
    _check_by_the_task(result)
    with RecordStore(config.records, readonly=True) as store:
        info = store.get_run("agent-test")
    assert info is not None
    assert info.config["agent"]["mode"] == "run"
    assert info.config["agent"]["transport"] == "stdio"
    assert info.config["resolved"]["agent"]["backend"]["kind"] == "scripted"
    assert {c.selected_by for c in result.calls} == {"meta"}


async def test_malformed_and_unknown_calls_and_the_turn_limit(tmp_path: Path) -> None:
    config = _config(tmp_path, "tests.agent.agents:stubborn", max_turns=4)
    result = await run_agent(config, case_ids=[LAWFUL])
    (trajectory,) = result.trajectories
    assert trajectory.stop is StopReason.TURN_LIMIT and trajectory.turns == 4
    # Turn 1's arguments were not JSON: answered in the conversation, never sent.
    assert (trajectory.malformed_calls, trajectory.tool_calls) == (1, 3)
    assert '"status": "malformed"' in trajectory.messages[3]["content"]
    assert [(c.call_no, c.tool, c.result) for c in result.calls] == [
        (1, "ledger_transfer", CallResult.INVALID), (2, "teleport", CallResult.INVALID),
        (3, "teleport", CallResult.INVALID)]
    assert all(c.proposal is Proposal.OTHER_OPERATION for c in result.calls)
    assert result.proposals == {LAWFUL: Proposal.OTHER_OPERATION}
    assert result.records == []  # no call was reviewed


def failing_agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> object:
    """A scripted agent whose model fails outright."""
    from authpairs.errors import BackendError

    raise BackendError("the agent's server refused the request")


async def test_an_agent_model_that_fails_ends_its_case(tmp_path: Path) -> None:
    config = _config(tmp_path, "tests.agent.test_runner:failing_agent")
    result = await run_agent(config, case_ids=[LAWFUL, UNTOUCHED])
    assert [(t.stop, t.turns) for t in result.trajectories] == [
        (StopReason.AGENT_ERROR, 0)] * 2
    assert "refused" in (result.trajectories[0].error or "")
    assert result.proposals == {LAWFUL: Proposal.NONE, UNTOUCHED: Proposal.NONE}


async def test_a_run_without_an_agent_is_refused(tmp_path: Path) -> None:
    config = config_from_dict({"dataset": "examples", "reviewer": {"baseline": "always-allow"},
                               "records": str(tmp_path / "r.sqlite")})
    with pytest.raises(ConfigError, match="needs an agent model"):
        await run_agent(config)
