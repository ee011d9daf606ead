"""Reading an agent run for analysis: its tool calls and the cases it offered.

An agent run (``authpairs mcp serve``, ``authpairs run --agent``) stores every tool call in the
``agent_calls`` table (the row model is :class:`authpairs.agent.calls.AgentCall`, one layer
above analysis) and one case record per case with a reviewed call. Analysis reads what it needs
of each call here -- the case, the call number, what the agent proposed, what became of the call
and the enforcement record -- after checking the row against its stored SHA-256, as
:func:`authpairs.agent.readback.agent_calls` does.

A case the agent made no reviewed call for has no case record, so its reference label is read
from the run's dataset (:func:`offered_cases`), which must still be the one the run served: the
cases are checked against the run's manifest (the SHA-256 over every case, reference included).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from authpairs.enforce.effect_record import EffectRecord
from authpairs.errors import AnalysisError
from authpairs.review.outcome import Decision, OutcomeStatus
from authpairs.runs.chain import read_hashed
from authpairs.runs.records import CaseRecord, RunInfo
from authpairs.runs.store import RecordStore

ProposalValue = Literal["case_operation", "other_operation"]
"""What a call proposed (:class:`authpairs.agent.calls.Proposal`, without ``none``)."""
ResultValue = Literal["executed", "allowed", "failed", "blocked", "unavailable", "invalid"]
"""What became of a call (:class:`authpairs.agent.calls.CallResult`)."""

PROPOSALS: tuple[str, ...] = ("case_operation", "other_operation")
"""Every value of :data:`ProposalValue`."""
RESULTS: tuple[str, ...] = ("executed", "allowed", "failed", "blocked", "unavailable",
                            "invalid")
"""Every value of :data:`ResultValue`."""
THROUGH_RESULTS = frozenset({"executed", "allowed"})
"""Results of a call that went through: executed in the sandbox, or ALLOW where nothing was
enforced (the one definition, :attr:`CaseRecord.went_through`)."""


class AgentRunError(AnalysisError):
    """An agent run cannot be analysed as asked (not an agent run, calls unreadable, the
    dataset no longer the one served)."""


class StackCall(BaseModel):
    """The part of one recorded tool call that scoring reads."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    case_id: str
    call_no: int
    tool: str
    proposal: ProposalValue
    result: ResultValue
    status: OutcomeStatus | None = None
    decision: Decision | None = None
    effect: EffectRecord | None = None

    @property
    def reviewed(self) -> bool:
        """The call reached the reviewer (every result but ``invalid``)."""
        return self.result != "invalid"

    @property
    def went_through(self) -> bool:
        """The call went through the enforcement point (executed, or allowed unenforced)."""
        return self.result in THROUGH_RESULTS

    @property
    def usable_block(self) -> bool:
        """The reviewer's usable decision was BLOCK (an abstention is not)."""
        return self.status is OutcomeStatus.DECISION and self.decision is Decision.BLOCK

    @property
    def own_operation(self) -> bool:
        """The call was the case's own operation (same tool, same arguments)."""
        return self.proposal == "case_operation"


def is_agent_run(info: RunInfo) -> bool:
    """Whether the run header marks an agent run (it holds ``agent``)."""
    return isinstance(info.config.get("agent"), dict)


def read_calls(store: RecordStore, run_id: str) -> list[StackCall]:
    """The recorded tool calls of ``run_id``, by case and call number. A row whose text does
    not match its stored SHA-256, or does not parse, is a :class:`RecordsError`."""
    return [read_hashed(text, digest, StackCall,
                        f"{store.path}: run '{run_id}', call {call_no} of case '{case_id}'",
                        "stored call")
            for case_id, call_no, text, digest in store.agent_call_rows(run_id)]


@dataclass(frozen=True)
class CaseFacts:
    """What analysis needs of a case: its reference label and grouping fields."""

    label: str
    split: str
    cluster: str
    resolved: bool = True
    attributes: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of_record(cls, record: CaseRecord) -> CaseFacts:
        """The facts a case record carries."""
        return cls(record.label, record.split, record.cluster, record.resolved,
                   dict(record.attributes))


def offered_case_ids(info: RunInfo) -> list[str]:
    """The cases an agent run offered (its expected case ids)."""
    return list(info.expected_case_ids)


def offered_cases(info: RunInfo, records: Iterable[CaseRecord]) -> dict[str, CaseFacts]:
    """The facts of every case the run offered: from its case record where it has one, else
    from the run's dataset (read only when some case has no record), which must match the
    run's manifest. A mismatch or an unreadable dataset is an :class:`AgentRunError`."""
    facts = {r.case_id: CaseFacts.of_record(r) for r in records}
    missing = [case_id for case_id in offered_case_ids(info) if case_id not in facts]
    if missing:
        facts.update(_facts_from_dataset(info, missing))
    return {case_id: facts[case_id] for case_id in offered_case_ids(info)}


def _facts_from_dataset(info: RunInfo, wanted: list[str]) -> dict[str, CaseFacts]:
    """The facts of ``wanted`` cases read from the run's dataset (every split)."""
    from authpairs.cases.dataset import manifest_of
    from authpairs.errors import AuthpairsError
    from authpairs.runs.api import load_run_dataset
    from authpairs.runs.config import RunConfig

    resolved: Any = info.config.get("resolved")
    where = f"run '{info.run_id}'"
    if not isinstance(resolved, dict):
        raise AgentRunError(f"{where}: the run header has no resolved configuration, so the "
                            f"labels of the {len(wanted)} case(s) without a case record cannot "
                            "be read")
    try:
        config = RunConfig.model_validate(resolved).model_copy(
            update={"split": "all", "limit": None, "sample": None})
        by_id = load_run_dataset(config).by_id()
    except (AuthpairsError, ValueError) as exc:
        raise AgentRunError(f"{where}: cannot read its dataset '{resolved.get('dataset')}' for "
                            f"the labels of the cases without a case record "
                            f"({' '.join(str(exc).split())})") from exc
    offered = offered_case_ids(info)
    absent = [case_id for case_id in offered if case_id not in by_id]
    expected = info.manifest.get("full_sha256")
    if absent or (expected and manifest_of("", (by_id[c] for c in offered)).full_sha256
                  != expected):
        raise AgentRunError(
            f"{where}: dataset '{resolved.get('dataset')}' no longer holds the cases the run "
            "offered as they were (" + (f"case '{absent[0]}' is missing" if absent else
                                        "their SHA-256 differs from the run's manifest")
            + "); the labels of the cases without a case record cannot be read")
    out: dict[str, CaseFacts] = {}
    for case_id in wanted:
        case = by_id[case_id]
        out[case_id] = CaseFacts(case.reference.label.value, case.split, case.cluster,
                                 case.reference.resolved, dict(case.attributes))
    return out
