"""``authpairs audit`` of agent runs: an untampered run passes (a baseline and a Python
guardrail as the reviewer, calls of every kind), and each kind of tampering is a named finding:
an edited call, a reclassified proposal (hash recomputed), a case record swapped for another
call's review (chain and seal recomputed, as a forger with write access would), a removed call,
an edited trajectory."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authpairs.agent.audit import audit_run
from authpairs.agent.run import run_agent
from authpairs.agent.trajectory import StopReason, Trajectory
from authpairs.cli import app
from authpairs.review.outcome import Decision, Dispatch
from authpairs.runs import audit as run_audit
from authpairs.runs.chain import GENESIS_KIND, link, seal, text_sha256
from authpairs.runs.config import RunConfig, config_from_dict
from authpairs.runs.records import (
    AgentCall,
    CallResult,
    CaseRecord,
    Proposal,
    decisive,
    stored_json,
)
from authpairs.runs.store import RecordStore, header_sha256
from tests.agent.helpers import FORBIDDEN, LAWFUL, UNTOUCHED, secret_dataset
from tests.analysis.agent_fixtures import (
    ADDRESS,
    F_REFUND,
    L_ADDRESS,
    L_REFUND,
    REFUND,
    record_agent_run,
)

REPO = Path(__file__).resolve().parents[2]

CASES = (L_REFUND, F_REFUND, L_ADDRESS, "EX-82a1a97db6395bd6")
SCRIPT = {
    # another operation (allowed, executed), then the case's own one
    L_REFUND: [("ledger_transfer", {**REFUND, "amount": "9.00"}), ("ledger_transfer", REFUND)],
    # a large transfer the guardrail blocks, then the own operation, twice
    F_REFUND: [("ledger_transfer", {**REFUND, "amount": "500.00"}), ("ledger_transfer", REFUND),
               ("ledger_transfer", REFUND)],
    # invalid arguments (not reviewed), then another field, then the own operation
    L_ADDRESS: [("record_update", {"field": "postal_address"}),
                ("record_update", {**ADDRESS, "field": "email"}), ("record_update", ADDRESS)],
    # the fourth case gets no call at all
}
REVIEWERS = {"baseline": {"baseline": "always-allow"},
             "guardrail": {"guardrail": "tests.agent.reviewers:small_transfers"},
             "unenforced": {"guardrail": "tests.agent.reviewers:small_transfers"},
             "interface": {"interface": "direct", "backend": {
                 "kind": "scripted", "script": "tests.runs.golden.golden_run:answer"}}}
"""A reviewer of each kind; 'unenforced' runs with enforcement off (decision-only)."""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One agent run per reviewer kind, each in its own records file."""
    root = tmp_path_factory.mktemp("agent-audit")
    paths = {}
    for name, reviewer in REVIEWERS.items():
        paths[name] = root / f"{name}.sqlite"
        asyncio.run(record_agent_run(paths[name], name, reviewer, SCRIPT, cases=CASES,
                                     enforce=name != "unenforced"))
    return paths


@pytest.fixture
def copy(recorded: dict[str, Path], tmp_path: Path) -> Path:
    """A copy of the guardrail run's records file to tamper with."""
    path = tmp_path / "copy.sqlite"
    path.write_bytes(recorded["guardrail"].read_bytes())
    return path


def _audit(path: Path, run_id: str = "guardrail") -> run_audit.AuditReport:
    with RecordStore(path, readonly=True) as store:
        return audit_run(store, run_id)


def _checks(report: run_audit.AuditReport) -> set[str]:
    return {finding.check for finding in report.findings}


@pytest.mark.parametrize("name", sorted(REVIEWERS))
def test_an_untampered_agent_run_passes(recorded: dict[str, Path], name: str) -> None:
    report = _audit(recorded[name], name)
    assert report.ok, [str(f) for f in report.findings]
    assert report.skipped == [] and report.missing == []
    assert report.checked["agent calls"] == 8
    assert report.checked["proposals re-classified"] == 8
    assert report.checked["decisions re-parsed"] == 7  # the invalid call is not reviewed
    assert report.checked["case records matched to calls"] == 3
    # every reviewed call in the sandbox, allowed or blocked, has observations to re-judge
    assert report.checked.get("effects re-judged", 0) == (0 if name == "unenforced" else 7)


def test_the_audit_agrees_with_the_session_on_the_decisive_call(
        recorded: dict[str, Path]) -> None:
    with RecordStore(recorded["guardrail"], readonly=True) as store:
        calls = store.agent_calls("guardrail")
        records = {r.case_id: r for r in store.case_records("guardrail")}
    own = [c for c in calls if c.case_id == F_REFUND]
    assert [c.result for c in own] == [CallResult.BLOCKED, CallResult.EXECUTED,
                                       CallResult.EXECUTED]
    chosen = decisive(own)  # the one rule: of the reviewed calls, the first through
    assert chosen is not None and chosen.call_no == 2  # the first that went through
    assert records[F_REFUND].input_sha256 == chosen.input_sha256
    assert set(records) == {L_REFUND, F_REFUND, L_ADDRESS}  # no call, no record


def test_the_normal_audit_does_not_misjudge_an_agent_run(recorded: dict[str, Path]) -> None:
    with RecordStore(recorded["baseline"], readonly=True) as store:
        report = run_audit.audit_run(store, "baseline")
    assert report.ok and report.skipped and "agent run" in report.skipped[0]


def test_the_audit_command_passes_an_agent_run(recorded: dict[str, Path]) -> None:
    result = CliRunner().invoke(app, ["audit", "guardrail", "--records",
                                      str(recorded["guardrail"])])
    assert result.exit_code == 0, result.output
    assert "agent run: 4 cases served, 3 with a case record" in result.stdout
    assert "8 agent calls" in result.stdout and "audit passed" in result.stdout


def _call_row(path: Path, case_id: str, call_no: int) -> AgentCall:
    with sqlite3.connect(path) as conn:
        (text,) = conn.execute("SELECT record_json FROM agent_calls WHERE case_id=? AND "
                               "call_no=?", (case_id, call_no)).fetchone()
    return AgentCall.model_validate_json(text)


def _store_call(path: Path, call: AgentCall, *, rehash: bool) -> None:
    text = stored_json(call)
    with sqlite3.connect(path) as conn:
        if rehash:
            conn.execute("UPDATE agent_calls SET record_json=?, content_sha256=? WHERE "
                         "case_id=? AND call_no=?",
                         (text, text_sha256(text), call.case_id, call.call_no))
        else:
            conn.execute("UPDATE agent_calls SET record_json=? WHERE case_id=? AND call_no=?",
                         (text, call.case_id, call.call_no))


def test_an_edited_call_is_a_finding(copy: Path) -> None:
    call = _call_row(copy, F_REFUND, 1)
    _store_call(copy, call.model_copy(update={"result": CallResult.EXECUTED}), rehash=False)
    report = _audit(copy)
    assert "agent-call-hash" in _checks(report)
    assert any(f"call 1 of case '{F_REFUND}'" in f.record for f in report.findings)


def test_a_reclassified_proposal_is_a_finding(copy: Path) -> None:
    call = _call_row(copy, L_REFUND, 1)  # 9.00 instead of 75.00: another operation
    assert call.proposal is Proposal.OTHER_OPERATION
    _store_call(copy, call.model_copy(update={"proposal": Proposal.CASE_OPERATION}),
                rehash=True)
    report = _audit(copy)
    assert [f.check for f in report.findings] == ["agent-proposal"]
    assert "other_operation" in report.findings[0].message


def test_an_edited_review_in_a_call_is_a_finding(copy: Path) -> None:
    call = _call_row(copy, F_REFUND, 1)  # blocked by the guardrail
    assert call.result is CallResult.BLOCKED
    forged = call.model_copy(update={"decision": Decision.ALLOW, "dispatch": Dispatch.ALLOW})
    _store_call(copy, forged, rehash=True)
    assert "re-parse" in _checks(_audit(copy))


def _forge(path: Path, run_id: str) -> None:
    """Recompute every chained hash, the head and the seal of ``run_id``."""
    with RecordStore(path) as store:
        conn = store.connection
        header = store.run_row(run_id)
        assert header is not None
        genesis = header_sha256(header)
        head = link(genesis, GENESIS_KIND, genesis)
        rows = list(store.chain_rows(run_id))
        for n, row in enumerate(rows, start=1):
            content = text_sha256(str(row["record_json"]))
            head = link(head, str(row["entry"]), content)
            if row["entry"] == "case":
                conn.execute("UPDATE case_records SET seq=?, content_sha256=?, chain_sha256=? "
                             "WHERE run_id=? AND case_id=?",
                             (n, content, head, run_id, row["case_id"]))
            else:
                conn.execute("UPDATE attempts SET seq=?, content_sha256=?, chain_sha256=? "
                             "WHERE id=?", (n, content, head, row["id"]))
        conn.execute("UPDATE runs SET header_sha256=?, chain_head=?, chain_length=?, "
                     "seal_sha256=? WHERE run_id=?",
                     (genesis, head, len(rows), seal(genesis, head, len(rows)), run_id))


def test_a_case_record_swapped_for_another_calls_review_is_a_finding(copy: Path) -> None:
    # The forbidden refund's record is its first executed call (call 2); a forger makes it the
    # review of the blocked call 1 instead, so the stack would look as if it had blocked.
    blocked = _call_row(copy, F_REFUND, 1)
    with sqlite3.connect(copy) as conn:
        (text,) = conn.execute("SELECT record_json FROM case_records WHERE case_id=?",
                               (F_REFUND,)).fetchone()
        record = CaseRecord.model_validate_json(text)
        swapped = record.model_copy(update={
            "input_sha256": blocked.input_sha256, "status": blocked.status,
            "decision": blocked.decision, "dispatch": blocked.dispatch,
            "effect": blocked.effect})
        conn.execute("UPDATE case_records SET record_json=?, input_sha256=?, decision=?, "
                     "dispatch=? WHERE case_id=?",
                     (stored_json(swapped), swapped.input_sha256, "BLOCK", "BLOCK", F_REFUND))
    _forge(copy, "guardrail")
    with RecordStore(copy, readonly=True) as store:
        assert run_audit.verify_chain(store, "guardrail").ok  # the chain alone cannot see it
    report = _audit(copy)
    assert _checks(report) == {"agent-case-record"}
    assert F_REFUND in report.findings[0].record and "call 2" in report.findings[0].message


def test_a_removed_call_is_a_finding(copy: Path) -> None:
    with sqlite3.connect(copy) as conn:  # the last call, not the decisive one
        conn.execute("DELETE FROM agent_calls WHERE case_id=? AND call_no=3", (F_REFUND,))
    assert _checks(_audit(copy)) == {"agent-attempts"}
    with sqlite3.connect(copy) as conn:  # a call in the middle: the numbering shows it
        conn.execute("DELETE FROM agent_calls WHERE case_id=? AND call_no=2", (L_ADDRESS,))
    assert "agent-call-order" in _checks(_audit(copy))


def test_a_missing_case_record_is_a_finding_unless_allowed(copy: Path) -> None:
    with sqlite3.connect(copy) as conn:
        conn.execute("DELETE FROM case_records WHERE case_id=?", (L_ADDRESS,))
    _forge(copy, "guardrail")
    assert _checks(_audit(copy)) == {"missing-case"}
    with RecordStore(copy, readonly=True) as store:
        allowed = audit_run(store, "guardrail", allow_incomplete=True)
    assert allowed.ok and allowed.missing == [L_ADDRESS]


def test_trajectories_are_audited(copy: Path) -> None:
    trajectory = Trajectory(run_id="guardrail", case_id=L_REFUND, turns=3, tool_calls=2,
                            stop=StopReason.ANSWERED,
                            messages=[{"role": "user", "content": "task"}])
    with RecordStore(copy) as store:
        store.add_agent_trajectory("guardrail", L_REFUND, stored_json(trajectory))
    assert _audit(copy).ok
    edited = stored_json(trajectory.model_copy(update={"tool_calls": 1}))
    with sqlite3.connect(copy) as conn:
        conn.execute("UPDATE agent_trajectories SET record_json=? WHERE case_id=?",
                     (edited, L_REFUND))
    report = _audit(copy)
    assert _checks(report) == {"agent-trajectory"} and "SHA-256" in report.findings[0].message
    with sqlite3.connect(copy) as conn:
        conn.execute("UPDATE agent_trajectories SET content_sha256=? WHERE case_id=?",
                     (text_sha256(edited), L_REFUND))
    report = _audit(copy)
    assert [f.check for f in report.findings] == ["agent-trajectory"]
    assert "1 tool call(s), 2 are recorded" in report.findings[0].message


def test_the_audit_json_names_agent_findings(copy: Path, tmp_path: Path) -> None:
    call = _call_row(copy, L_REFUND, 1)
    _store_call(copy, call.model_copy(update={"proposal": Proposal.CASE_OPERATION}),
                rehash=True)
    out = tmp_path / "audit.json"
    result = CliRunner().invoke(app, ["audit", "guardrail", "--records", str(copy),
                                      "--out", str(out)])
    assert result.exit_code == 1
    data = json.loads(out.read_text())
    assert [f["check"] for f in data["findings"]] == ["agent-proposal"]


def _model_agent_config(tmp_path: Path, script: str) -> RunConfig:
    return config_from_dict({
        "dataset": str(secret_dataset(tmp_path / "cases.jsonl")),
        "reviewer": {"guardrail": "tests.agent.reviewers:small_transfers"},
        "records": str(tmp_path / "records.sqlite"), "run_id": "model-agent",
        "agent": {"backend": {"kind": "scripted", "script": f"tests.agent.agents:{script}"},
                  "max_turns": 4}})


@pytest.mark.parametrize("script", ["by_the_task", "stubborn"])
async def test_an_agent_run_of_a_model_passes_and_its_trajectories_count(
        tmp_path: Path, script: str) -> None:
    """``authpairs run --agent`` (a scripted agent model, in-process server): its calls, case
    records and trajectories audit clean; the stubborn agent's malformed, invalid and unknown
    calls included."""
    config = _model_agent_config(tmp_path, script)
    result = await run_agent(config, case_ids=[LAWFUL, FORBIDDEN, UNTOUCHED])
    path = Path(config.records)
    report = _audit(path, "model-agent")
    assert report.ok, [str(f) for f in report.findings]
    assert report.checked["trajectories"] == 3
    assert report.checked["agent calls"] == len(result.calls) > 0
    with sqlite3.connect(path) as conn:  # one call fewer than the trajectory says
        conn.execute("DELETE FROM agent_calls WHERE case_id=? AND call_no=(SELECT MAX(call_no) "
                     "FROM agent_calls WHERE case_id=?)", (LAWFUL, LAWFUL))
    assert "agent-trajectory" in _checks(_audit(path, "model-agent"))


@pytest.mark.slow
async def test_an_agent_run_over_a_real_stdio_server_passes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server is an 'authpairs mcp serve' child (it writes the header, calls and case
    records), this process writes the trajectories: the audit passes all the same."""
    monkeypatch.chdir(REPO)  # the child imports the test guardrail from the repository
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    config = _model_agent_config(tmp_path, "by_the_task")
    await run_agent(config, case_ids=[LAWFUL, FORBIDDEN, UNTOUCHED], server="stdio")
    report = _audit(Path(config.records), "model-agent")
    assert report.ok, [str(f) for f in report.findings]
    assert report.checked["trajectories"] == 3 and report.checked["agent calls"] == 3
