"""Audit an agent run (``authpairs mcp serve``, ``authpairs run --agent``) as a normal run is
audited, and its agent calls with it; :func:`audit_run` audits a run of either kind.

The audit of a normal run (:func:`authpairs.runs.audit.audit_run`) re-renders each case as the
dataset has it; an agent run reviewed the operations the agent *proposed* instead, one review per
tool call, and keeps the calls in the ``agent_calls`` table (outside the hash chain, each row with
the SHA-256 of its text). :func:`audit_agent_run` checks

* the run header, its seal and the chain of case records and attempts
  (:func:`~authpairs.runs.audit.verify_chain`), the configuration hash (the agent session's
  rule: the ``agent`` section and the configuration's identity), the served cases against the
  manifest and the expected case ids, and the template hashes;
* every agent call: its text against its SHA-256 (``agent-call-hash``), that it parses and
  names its own row (``agent-call``), call numbers 1, 2, ... per case (``agent-call-order``), and
  that its ``proposal`` is what the case's effect descriptor and the call's tool and arguments
  give (:func:`~authpairs.agent.tools.proposal_of`; ``agent-proposal``);
* the calls against the chained attempts: each reviewed call has the case's next formal attempt,
  made for the call's input, and no formal attempt is left without a call (``agent-attempts``:
  a call row removed or added), and the attempt's raw output parsed again by the reviewer that
  ran gives the call's outcome (``re-parse``);
* every reviewed call's input: the case with the call as its effect, rendered again, hashes to
  the call's ``input_sha256`` (``input-hash``), and each enforced call's effect judged again by
  its verifier on the stored observations (``effect-judgement``);
* every case record: it is the review of the case's decisive reviewed call (the first that
  went through, else the last: :func:`authpairs.runs.records.decisive`), with the same input,
  outcome and effect (``agent-case-record``), and the dataset's label; a case with a reviewed
  call has a case record (``missing-case`` unless ``allow_incomplete``), a case without one has
  none (``unexpected-case``);
* each stored trajectory (``authpairs run --agent``): its text against its SHA-256, that it
  parses, is of a served case, and counts as many tool calls as were recorded for the case
  (``agent-trajectory``).

This module sits in the agent layer because it re-classifies proposals and re-renders inputs
with the agent's tools; the normal run's checks are reused from :mod:`authpairs.runs.audit`,
below it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

from pydantic import BaseModel

from authpairs.agent.tools import proposal_of, proposed_descriptor
from authpairs.agent.trajectory import Trajectory
from authpairs.cases.dataset import Dataset
from authpairs.cases.models import Case
from authpairs.errors import AuthpairsError
from authpairs.review.reviewers import Reviewer
from authpairs.runs import audit as run_audit
from authpairs.runs.audit import AuditReport, outcome_difference, recheck_effect, reparse
from authpairs.runs.chain import text_sha256
from authpairs.runs.config import RunConfig, session_sha256
from authpairs.runs.records import (
    AgentCall,
    AttemptRecord,
    CaseRecord,
    RunInfo,
    decisive,
)
from authpairs.runs.store import RecordStore

_Row = TypeVar("_Row", bound=BaseModel)


def audit_run(store: RecordStore, run_id: str, *, dataset: Dataset | None = None,
              load_dataset: Callable[[RunConfig], Dataset] | None = None,
              allow_incomplete: bool = False) -> AuditReport:
    """The audit of a stored run of either kind: :func:`audit_agent_run` for an agent run,
    :func:`authpairs.runs.audit.audit_run` for any other (same arguments)."""
    info = store.get_run(run_id)
    if info is not None and info.is_agent_run:
        return audit_agent_run(store, run_id, dataset=dataset, load_dataset=load_dataset,
                               allow_incomplete=allow_incomplete)
    return run_audit.audit_run(store, run_id, dataset=dataset, load_dataset=load_dataset,
                               allow_incomplete=allow_incomplete)


def audit_agent_run(store: RecordStore, run_id: str, *, dataset: Dataset | None = None,
                    load_dataset: Callable[[RunConfig], Dataset] | None = None,
                    allow_incomplete: bool = False) -> AuditReport:
    """The full audit of one agent run (see the module docstring).

    ``dataset`` is the dataset in hand (narrowed here to the cases the run served); without it
    the served cases are selected from the stored configuration (``load_dataset``, else as the
    session selected them). What cannot be checked is listed in
    :attr:`AuditReport.skipped`, never silently passed."""
    report = run_audit.verify_chain(store, run_id)
    info = store.get_run(run_id)
    if info is None:
        return report
    config = run_audit.stored_config(
        report, info, config_sha256=partial(session_sha256, info.config.get("agent")),
        mismatch="stored configuration and agent section do not hash to the recorded "
                 "config_sha256")
    if config is None:
        return report
    records = run_audit.stored_records(report, store, run_id)
    if records is None:
        return report
    calls = _read_calls(report, store, run_id, set(info.expected_case_ids))
    _check_case_records(report, info, records, calls, allow_incomplete)
    _check_trajectories(report, store, run_id, set(info.expected_case_ids), calls)
    attempts = run_audit.formal_attempts(store, run_id)  # one per reviewed call
    _check_attempts(report, calls, attempts)
    reviewer = run_audit.recorded_reviewer(report, config, info)
    if reviewer is not None:
        _reparse_calls(report, calls, attempts, reviewer)
    served = _served_cases(report, info, config, dataset, load_dataset)
    if served is not None:
        _check_served(report, info, served, records, calls, reviewer)
    return report


def _name(call: AgentCall | tuple[str, int]) -> str:
    case_id, call_no = (call.case_id, call.call_no) if isinstance(call, AgentCall) else call
    return f"agent call {call_no} of case '{case_id}'"


def _read_row(report: AuditReport, name: str, text: str, digest: str, model: type[_Row], *,
              what: str, hash_check: str, parse_check: str) -> _Row | None:
    """A stored row's ``text`` read as ``model`` after checking it against its SHA-256
    ``digest``; None when it does not match (a ``hash_check`` finding) or does not parse (a
    ``parse_check`` finding). ``what`` names the row in the findings."""
    if text_sha256(text) != digest:
        report.add(name, hash_check, f"stored {what} does not match its SHA-256")
        return None
    try:
        return model.model_validate_json(text)
    except ValueError as exc:
        report.add(name, parse_check, f"unreadable {what}: {str(exc).splitlines()[0][:160]}")
        return None


def _read_calls(report: AuditReport, store: RecordStore, run_id: str,
                expected: set[str]) -> dict[str, list[AgentCall]]:
    """The calls that check out against their rows, by case in call order; each problem is a
    finding."""
    calls: dict[str, list[AgentCall]] = {}
    for case_id, call_no, text, digest in store.agent_call_rows(run_id):
        name = _name((case_id, call_no))
        report.count("agent calls")
        call = _read_row(report, name, text, digest, AgentCall, what="call",
                         hash_check="agent-call-hash", parse_check="agent-call")
        if call is None:
            continue
        if (call.run_id, call.case_id, call.call_no) != (run_id, case_id, call_no):
            report.add(name, "agent-call", f"the call says run '{call.run_id}', case "
                       f"'{call.case_id}', call {call.call_no}")
            continue
        if case_id not in expected:
            report.add(name, "unexpected-case", "a call for a case the run did not serve")
            continue
        calls.setdefault(case_id, []).append(call)
    for case_id, made in calls.items():
        numbers = [call.call_no for call in made]
        if numbers != list(range(1, len(made) + 1)):
            report.add(f"case '{case_id}'", "agent-call-order", f"calls numbered {numbers}, "
                       f"expected 1 to {len(made)} (a call removed or added?)")
    return calls


def _check_case_records(report: AuditReport, info: RunInfo, records: list[CaseRecord],
                        calls: dict[str, list[AgentCall]], allow_incomplete: bool) -> None:
    """Each case record is its decisive call's review; a case has one exactly when it has a
    reviewed call."""
    by_case = {record.case_id: record for record in records}
    expected = set(info.expected_case_ids)
    report.count("expected cases", len(expected))
    report.missing = []
    for case_id in sorted(expected | set(by_case)):
        record = by_case.get(case_id)
        call = decisive(calls.get(case_id, []))  # the call whose review is the case record
        if record is None:
            if call is not None:
                report.missing.append(case_id)
                if not allow_incomplete:
                    report.add(f"case '{case_id}'", "missing-case", f"{_name(call)} was "
                               "reviewed, but the case has no case record (run incomplete or "
                               "truncated)")
            continue
        name = f"case record '{case_id}'"
        if case_id not in expected:
            report.add(name, "unexpected-case", "not among the case ids the run header expects")
            continue
        if call is None:
            report.add(name, "unexpected-case", "no reviewed agent call of the case gives it a "
                       "record")
            continue
        report.count("case records matched to calls")
        problem = _record_difference(record, call)
        if problem:
            report.add(name, "agent-case-record", f"is not the review of {_name(call)}, the "
                       f"decisive call: {problem}")


def _record_difference(record: CaseRecord, call: AgentCall) -> str | None:
    """How a case record differs from a call's review, or None."""
    pairs = [("input_sha256", record.input_sha256, call.input_sha256),
             ("status", record.status, call.status), ("decision", record.decision, call.decision),
             ("reason_code", record.reason_code, call.reason_code),
             ("dispatch", record.dispatch, call.dispatch),
             ("effect", _dump(record.effect), _dump(call.effect)),
             ("infra_attempts", record.infra_attempts, call.infra_attempts)]
    bad = [f"{key}: record {_short(a)}, call {_short(b)}" for key, a, b in pairs if a != b]
    return "; ".join(bad) or None


def _dump(model: Any) -> Any:
    return None if model is None else model.model_dump(mode="json")


def _short(value: object) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _check_attempts(report: AuditReport, calls: dict[str, list[AgentCall]],
                    attempts: dict[str, list[AttemptRecord]]) -> None:
    """The reviewed calls of each case and its formal attempts pair up one to one, in order,
    each pair made for the same input (the attempts are chained, the calls are not)."""
    for case_id in sorted(set(calls) | set(attempts)):
        done = [call for call in calls.get(case_id, []) if call.reviewed]
        formal = attempts.get(case_id, [])
        for call, attempt in zip(done, formal, strict=False):
            if attempt.input_sha256 != call.input_sha256:
                report.add(_name(call), "agent-attempts", f"its formal attempt (attempt "
                           f"{attempt.attempt_no}) was made for another input")
        for call in done[len(formal):]:
            report.add(_name(call), "agent-attempts", "reviewed, but no formal attempt holds "
                       "its raw output (a call added?)")
        for attempt in formal[len(done):]:
            report.add(f"attempt {attempt.attempt_no} of case '{case_id}'", "agent-attempts",
                       "a formal attempt without a reviewed agent call (a call removed?)")


def _reparse_calls(report: AuditReport, calls: dict[str, list[AgentCall]],
                   attempts: dict[str, list[AttemptRecord]], reviewer: Reviewer) -> None:
    """Each reviewed call's outcome is what its formal attempt's raw output parses to."""
    for case_id, made in calls.items():
        done = [call for call in made if call.reviewed]
        for call, attempt in zip(done, attempts.get(case_id, []), strict=False):
            report.count("decisions re-parsed")
            problem = outcome_difference(call, reparse(reviewer, attempt))
            if problem:
                report.add(_name(call), "re-parse", problem)


def _served_cases(report: AuditReport, info: RunInfo, config: RunConfig,
                  dataset: Dataset | None,
                  load_dataset: Callable[[RunConfig], Dataset] | None) -> Dataset | None:
    """The cases the run served (the header's ``agent.cases``), from the dataset in hand or
    as the session selected them; None (a skipped check) when they cannot be had."""
    agent = info.config.get("agent") or {}
    wanted = [str(c) for c in agent.get("cases") or info.expected_case_ids]
    try:
        if dataset is None and load_dataset is not None:
            dataset = load_dataset(config)
        elif dataset is None:
            from authpairs.agent.serve import select_cases

            return select_cases(config, wanted)
    except AuthpairsError as exc:
        report.skipped.append(f"dataset checks (proposals, input hashes, labels, manifest, "
                              f"effects): dataset '{config.dataset}' not available: {exc}")
        return None
    by_id = dataset.by_id()
    absent = [case_id for case_id in wanted if case_id not in by_id]
    for case_id in absent:
        report.add(f"case '{case_id}'", "dataset", "served by the run, but not in the dataset "
                   "in hand")
    return Dataset(dataset.name, [by_id[case_id] for case_id in wanted if case_id in by_id])


def _check_served(report: AuditReport, info: RunInfo, served: Dataset,
                  records: list[CaseRecord], calls: dict[str, list[AgentCall]],
                  reviewer: Reviewer | None) -> None:
    """Manifest, expected cases, labels, every call's proposal, input and effect."""
    if served.manifest().public_sha256 != info.manifest_sha256:
        report.add("run header", "manifest-hash", f"the served cases of dataset "
                   f"'{served.name}' in hand do not match the recorded manifest")
    if sorted(served.case_ids()) != sorted(info.expected_case_ids):
        report.add("run header", "expected-cases", "expected case ids differ from the cases "
                   "the run served")
    cases = served.by_id()
    for record in records:
        case = cases.get(record.case_id)
        if case is not None and case.reference.label.value != record.label:
            report.add(f"case record '{record.case_id}'", "label", f"recorded label "
                       f"{record.label}, dataset says {case.reference.label.value}")
    verifiers: dict[str, Any] = {}
    for case_id, made in sorted(calls.items()):
        case = cases.get(case_id)
        if case is None:
            continue
        for call in made:
            _check_call(report, case, call, reviewer, verifiers)


def _check_call(report: AuditReport, case: Case, call: AgentCall, reviewer: Reviewer | None,
                verifiers: dict[str, Any]) -> None:
    """One call against its case: the proposal's classification, the input, the effect."""
    proposed = proposed_descriptor(call.tool, call.arguments)
    proposal = proposal_of(case.public.effect, proposed)
    report.count("proposals re-classified")
    if call.proposal is not proposal:
        report.add(_name(call), "agent-proposal", f"recorded as {call.proposal.value}, but "
                   f"{call.tool} with these arguments is {proposal.value} for the case")
    if call.status is None and call.input_sha256 is None:
        return  # invalid, or the reviewer could not be asked: nothing was rendered
    proposed_case = case.model_copy(
        update={"public": case.public.model_copy(update={"effect": proposed})})
    if reviewer is not None:
        report.count("inputs re-rendered")
        if reviewer.render(proposed_case.public).sha256() != call.input_sha256:
            report.add(_name(call), "input-hash", "the case with the call's operation renders "
                       "to another reviewer input than the recorded one")
    if call.enforced:
        assert call.effect is not None
        recheck_effect(report, _name(call), call.effect, call.dispatch, proposed, verifiers)


def _check_trajectories(report: AuditReport, store: RecordStore, run_id: str,
                        expected: set[str], calls: dict[str, list[AgentCall]]) -> None:
    """Each stored trajectory: its hash, its text, its case, its count of tool calls."""
    for case_id, text, digest in store.agent_trajectory_rows(run_id):
        name = f"trajectory of case '{case_id}'"
        report.count("trajectories")
        trajectory = _read_row(report, name, text, digest, Trajectory, what="trajectory",
                               hash_check="agent-trajectory", parse_check="agent-trajectory")
        if trajectory is None:
            continue
        if (trajectory.run_id, trajectory.case_id) != (run_id, case_id):
            report.add(name, "agent-trajectory", f"the trajectory says run "
                       f"'{trajectory.run_id}', case '{trajectory.case_id}'")
        elif case_id not in expected:
            report.add(name, "unexpected-case", "a trajectory of a case the run did not serve")
        elif trajectory.tool_calls != len(calls.get(case_id, [])):
            report.add(name, "agent-trajectory", f"the agent made {trajectory.tool_calls} tool "
                       f"call(s), {len(calls.get(case_id, []))} are recorded")
