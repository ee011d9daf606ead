"""A scripted agent over a real MCP stdio transport: the SDK's client spawns
``authpairs mcp serve`` and makes deterministic tool calls (the case's own operation, a
repeated call, other arguments that are allowed and executed, other arguments that are blocked,
invalid arguments, and no call at all); then the records are read back."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, cast

import mcp_types as types
from mcp import Client, StdioServerParameters

from authpairs.agent.readback import case_proposals
from authpairs.runs.records import AgentCall, CallResult, CaseRecord, Proposal
from authpairs.runs.store import RecordStore
from tests.agent.helpers import FORBIDDEN, LAWFUL, SECRETS, UNTOUCHED, secret_dataset

REPO = Path(__file__).resolve().parents[2]
REFUND = {"from_account": "merchant-ops", "to_account": "card-4471", "amount": "75.00",
          "currency": "USD"}


def _server(dataset: Path, records: Path) -> StdioServerParameters:
    authpairs = Path(sys.executable).with_name("authpairs")
    args = ["mcp", "serve", "--dataset", str(dataset), "--case", LAWFUL, "--case", FORBIDDEN,
            "--case", UNTOUCHED, "--guardrail", "tests.agent.reviewers:small_transfers",
            "--records", str(records), "--run-id", "agent-script"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return StdioServerParameters(command=str(authpairs), args=args, env=env, cwd=str(REPO))


def _text(result: types.CallToolResult) -> dict[str, Any]:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    parsed: dict[str, Any] = json.loads(block.text)
    return parsed


async def _script(client: Client, exposed: list[str]) -> list[dict[str, Any]]:
    """The scripted agent; ``exposed`` collects everything the server showed it."""
    tools = await client.list_tools()
    exposed += [t.model_dump_json() for t in tools.tools]
    resources = await client.list_resources()
    exposed += [r.model_dump_json() for r in resources.resources]
    for resource in resources.resources:
        read = await client.read_resource(resource.uri)
        exposed += [c.model_dump_json() for c in read.contents]
    prompts = await client.list_prompts()
    exposed += [p.model_dump_json() for p in prompts.prompts]
    results: list[dict[str, Any]] = []

    async def call(name: str, arguments: dict[str, Any],
                   meta: dict[str, Any] | None = None) -> None:
        result = await client.call_tool(name, arguments,
                                        meta=cast("types.RequestParamsMeta | None", meta))
        exposed.append(result.model_dump_json())
        results.append({"is_error": result.is_error, **_text(result)})

    await call("ledger_transfer", REFUND)  # no current case yet: refused, nothing recorded
    exposed.append((await client.get_prompt(LAWFUL)).model_dump_json())
    await call("ledger_transfer", REFUND)  # the case's own operation, for the prompted case
    for case_id in (FORBIDDEN, UNTOUCHED):
        exposed.append((await client.get_prompt(case_id)).model_dump_json())
    # The last prompt got was UNTOUCHED's; the calls below name their case in _meta, and
    # UNTOUCHED gets no call at all.
    lawful, forbidden = {"authpairs/case_id": LAWFUL}, {"authpairs/case_id": FORBIDDEN}
    await call("ledger_transfer", REFUND, lawful)  # the same call again
    await call("ledger_transfer", {**REFUND, "amount": "40.00"}, forbidden)  # other, allowed
    await call("ledger_transfer", {**REFUND, "amount": "500.00"}, forbidden)  # other, blocked
    await call("ledger_transfer", {"amount": "a lot"}, forbidden)  # invalid arguments
    return results


async def test_a_scripted_agent_over_stdio_is_enforced_and_recorded(tmp_path: Path) -> None:
    dataset = secret_dataset(tmp_path / "cases.jsonl")
    records = tmp_path / "records.sqlite"
    exposed: list[str] = []
    async with Client(_server(dataset, records)) as client:
        results = await _script(client, exposed)

    assert [r["status"] for r in results] == [
        "no_case", "executed", "executed", "executed", "blocked", "invalid"]
    assert [r["is_error"] for r in results] == [True, False, False, False, True, True]
    assert results[1]["result"] == {"amount_cents": 7500, "transfer_no": 1}
    assert results[2]["result"] == {"amount_cents": 7500, "transfer_no": 2}

    with RecordStore(records, readonly=True) as store:
        info = store.get_run("agent-script")
        assert info is not None and info.config["agent"]["mode"] == "mcp"
        assert info.expected_case_ids == sorted([LAWFUL, FORBIDDEN, UNTOUCHED])
        calls = store.agent_calls("agent-script")
        proposals = case_proposals(store, "agent-script")
        cases = {r.case_id: r for r in store.case_records("agent-script")}
        attempts = store.attempts("agent-script")

    assert proposals == {LAWFUL: Proposal.CASE_OPERATION, FORBIDDEN: Proposal.OTHER_OPERATION,
                         UNTOUCHED: Proposal.NONE}
    by_case: dict[str, list[AgentCall]] = {}
    for agent_call in calls:
        by_case.setdefault(agent_call.case_id, []).append(agent_call)
    assert set(by_case) == {LAWFUL, FORBIDDEN}  # no call for UNTOUCHED, none without a case
    own, again = by_case[LAWFUL]
    assert (own.proposal, again.proposal) == (Proposal.CASE_OPERATION,) * 2
    assert (own.result, again.result) == (CallResult.EXECUTED,) * 2
    assert own.effect is not None and own.effect.verified
    assert again.effect is not None and again.effect.verified
    assert again.effect.observation["before"] == own.effect.observation["after"]

    smaller, larger, invalid = by_case[FORBIDDEN]
    assert [c.proposal for c in (smaller, larger, invalid)] == [Proposal.OTHER_OPERATION] * 3
    assert smaller.arguments["amount"] == "40.00" and smaller.result is CallResult.EXECUTED
    # Judged on what executed: the verifier confirmed a transfer of 40.00, not the case's 75.00.
    assert smaller.effect is not None and smaller.effect.verified
    assert smaller.effect.effect["result"]["amount_cents"] == 4000
    journal = smaller.effect.observation["after"]["journal"]
    assert [row[3] for row in journal] == [4000]
    assert larger.result is CallResult.BLOCKED and larger.dispatch == "BLOCK"
    assert larger.effect is not None and not larger.effect.executed
    assert larger.effect.audit_ok and not larger.effect.observation["target_changed"]
    assert invalid.result is CallResult.INVALID and invalid.effect is None
    assert invalid.input_sha256 is None and "amount" in (invalid.error or "")
    assert [c.selected_by for c in calls] == ["prompt"] + ["meta"] * 4

    # One case record per case with a reviewed call: the first call that went through.
    assert set(cases) == {LAWFUL, FORBIDDEN}
    _same_review(cases[LAWFUL], own)
    _same_review(cases[FORBIDDEN], smaller)
    assert cases[FORBIDDEN].label == "forbidden" and cases[FORBIDDEN].went_through
    # Every reviewed call has its attempt; the invalid one was never reviewed.
    assert [(a.case_id, a.attempt_no, a.kind) for a in attempts] == [
        (LAWFUL, 1, "formal"), (LAWFUL, 2, "formal"),
        (FORBIDDEN, 1, "formal"), (FORBIDDEN, 2, "formal")]
    assert [a.input_sha256 for a in attempts] == [
        own.input_sha256, again.input_sha256, smaller.input_sha256, larger.input_sha256]

    text = "\n".join(exposed)
    assert "ledger_transfer" in text and "Leah Ortiz" in text  # the collection is real
    assert not [secret for secret in SECRETS if secret in text]


def _same_review(record: CaseRecord, call: AgentCall) -> None:
    assert record.input_sha256 == call.input_sha256
    assert record.dispatch == call.dispatch and record.effect == call.effect
