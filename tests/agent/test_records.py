"""Agent calls in the records file: schemas 4 and 5 add their tables to older files, a tampered
call is refused on reading, and the session's case record is its first call that went
through."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from authpairs.agent.readback import case_proposals
from authpairs.agent.session import AgentSession, decisive
from authpairs.cases.dataset import Dataset
from authpairs.cases.examples import load_examples
from authpairs.enforce.enforcer import LocalEnforcer
from authpairs.errors import RecordsError
from authpairs.review.reviewers import BaselineReviewer
from authpairs.runs.case_runner import CaseRunner
from authpairs.runs.records import AgentCall, CallResult, Proposal, RunInfo, stored_json
from authpairs.runs.store import SCHEMA_VERSION, RecordStore
from tests.agent.helpers import LAWFUL

FIXTURES = Path(__file__).resolve().parents[1] / "runs" / "fixtures"
REFUND = {"from_account": "merchant-ops", "to_account": "card-4471", "amount": "75.00",
          "currency": "USD"}


@pytest.mark.parametrize("version", [2, 3, 4])
def test_an_older_file_is_read_as_it_is_and_migrated_for_writing(
        tmp_path: Path, version: int) -> None:
    copy = tmp_path / "old.sqlite"
    shutil.copyfile(FIXTURES / f"records-v{version}.sqlite", copy)
    with RecordStore(copy, readonly=True) as store:
        assert store.schema_version == version
        assert store.agent_call_rows("fixture-baseline") == []
        assert store.agent_trajectory_rows("fixture-baseline") == []
    with RecordStore(copy) as store:
        assert store.agent_call_rows("fixture-baseline") == []
        assert len(store.case_records("fixture-baseline")) == 8
    with sqlite3.connect(copy) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {"agent_calls", "agent_trajectories"} <= tables


def _session(store: RecordStore, enforcer: LocalEnforcer, baseline: str) -> AgentSession:
    cases = Dataset("examples", [c for c in load_examples() if c.case_id == LAWFUL])
    store.open_run(RunInfo(run_id="r", created_at="t", config={}, config_sha256="c",
                           manifest={}, manifest_sha256="m", expected_case_ids=[LAWFUL]))
    return AgentSession("r", cases, CaseRunner(BaselineReviewer(baseline), enforcer=enforcer),
                        store)


async def test_blocked_calls_give_the_last_review_as_the_case_record(tmp_path: Path) -> None:
    with RecordStore(tmp_path / "r.sqlite") as store, LocalEnforcer(tmp_path) as enforcer:
        session = _session(store, enforcer, "always-block")
        first = await session.call(LAWFUL, "ledger_transfer", REFUND)
        second = await session.call(LAWFUL, "ledger_transfer", {**REFUND, "amount": "1.00"})
        assert (first.result, second.result) == (CallResult.BLOCKED,) * 2
        stored = session.close()
        assert session.close() == []
        assert [r.input_sha256 for r in stored] == [second.input_sha256]
        assert not stored[0].went_through
        with pytest.raises(RuntimeError, match="closed"):
            await session.call(LAWFUL, "ledger_transfer", REFUND)
        assert case_proposals(store, "r") == {LAWFUL: Proposal.CASE_OPERATION}


async def test_a_tampered_call_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with RecordStore(path) as store, LocalEnforcer(tmp_path) as enforcer:
        session = _session(store, enforcer, "always-allow")
        call = await session.call(LAWFUL, "ledger_transfer", {**REFUND, "amount": "9.00"})
        assert call.proposal is Proposal.OTHER_OPERATION and call.result is CallResult.EXECUTED
        assert store.agent_calls("r") == [call]
        session.close()
    edited = stored_json(call.model_copy(update={"result": CallResult.BLOCKED}))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE agent_calls SET record_json=?", (edited,))
    with RecordStore(path, readonly=True) as store, pytest.raises(RecordsError, match="SHA-256"):
        store.agent_calls("r")


def test_the_decisive_call_is_the_first_reviewed_that_went_through() -> None:
    def call(n: int, dispatch: str | None) -> AgentCall:
        answer = {"status": "decision", "decision": dispatch, "dispatch": dispatch}
        return AgentCall.model_validate({
            "run_id": "r", "case_id": "c", "call_no": n, "tool": "t", "proposal": "none",
            "result": "unavailable" if dispatch is None else "blocked",
            **(answer if dispatch else {})})

    blocked, allowed, later = call(1, "BLOCK"), call(2, "ALLOW"), call(3, "ALLOW")
    assert decisive([blocked, allowed, later]) is allowed
    assert decisive([blocked, call(4, "BLOCK")]).call_no == 4  # type: ignore[union-attr]
    assert decisive([blocked, call(5, None)]) is blocked  # no answer: not reviewed
    assert decisive([call(6, None)]) is None
    assert isinstance(AgentCall.model_fields["proposal"].annotation, type)


async def test_a_block_then_a_transport_failure_is_blocked_in_record_and_score(
        tmp_path: Path) -> None:
    """The case record and the stack outcome follow the one decisive-call rule: a call that
    failed in transport after a usable BLOCK leaves the BLOCK decisive for both."""
    from authpairs.analysis.agent_runs import StackOutcome, stack_case
    from authpairs.analysis.outcomes import CaseFacts
    from authpairs.backends.config import SamplingConfig
    from authpairs.backends.scripted import ScriptedBackend
    from authpairs.errors import TransportError
    from authpairs.review.interfaces import get_interface
    from authpairs.review.reviewers import ModelReviewer

    def block_once(request: object) -> str:
        if backend.calls > 1:
            raise TransportError("connection reset by the model server")
        return '{"decision": "BLOCK"}'

    backend = ScriptedBackend(block_once)
    reviewer = ModelReviewer(get_interface("direct"), backend, SamplingConfig())
    cases = Dataset("examples", [c for c in load_examples() if c.case_id == LAWFUL])
    with RecordStore(tmp_path / "r.sqlite") as store, LocalEnforcer(tmp_path) as enforcer:
        store.open_run(RunInfo(run_id="r", created_at="t", config={}, config_sha256="c",
                               manifest={}, manifest_sha256="m", expected_case_ids=[LAWFUL]))
        session = AgentSession("r", cases, CaseRunner(reviewer, enforcer=enforcer,
                                                      infra_retries=0), store)
        first = await session.call(LAWFUL, "ledger_transfer", REFUND)
        second = await session.call(LAWFUL, "ledger_transfer", REFUND)
        assert (first.result, second.result) == (CallResult.BLOCKED, CallResult.UNAVAILABLE)
        assert second.status is None and "connection reset" in (second.error or "")
        (record,) = session.close()
        assert record.input_sha256 == first.input_sha256 and record.decision == "BLOCK"
        case = stack_case(LAWFUL, CaseFacts.of_record(record), store.agent_calls("r"))
    assert decisive([first, second]) is first
    assert (case.outcome, case.reason, case.calls, case.reviewed_calls) == (
        StackOutcome.GUARDRAIL_BLOCKED, None, 2, 1)


async def test_a_reviewer_that_cannot_answer_makes_the_call_unavailable(
        tmp_path: Path) -> None:
    from authpairs.backends.config import SamplingConfig
    from authpairs.backends.scripted import ScriptedBackend
    from authpairs.errors import BackendError
    from authpairs.review.interfaces import get_interface
    from authpairs.review.reviewers import ModelReviewer

    def refuse(request: object) -> str:
        raise BackendError("HTTP 401 from the model server")

    reviewer = ModelReviewer(get_interface("direct"), ScriptedBackend(refuse), SamplingConfig())
    cases = Dataset("examples", [c for c in load_examples() if c.case_id == LAWFUL])
    with RecordStore(tmp_path / "r.sqlite") as store, LocalEnforcer(tmp_path) as enforcer:
        store.open_run(RunInfo(run_id="r", created_at="t", config={}, config_sha256="c",
                               manifest={}, manifest_sha256="m", expected_case_ids=[LAWFUL]))
        session = AgentSession("r", cases, CaseRunner(reviewer, enforcer=enforcer), store)
        call = await session.call(LAWFUL, "ledger_transfer", REFUND)
        assert call.result is CallResult.UNAVAILABLE and "401" in (call.error or "")
        assert store.agent_calls("r") == [call]
        assert session.close() == []
