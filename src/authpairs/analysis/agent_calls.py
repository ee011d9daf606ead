"""The cases an agent run offered, for analysis.

An agent run (``authpairs mcp serve``, ``authpairs run --agent``) stores every tool call
(:class:`~authpairs.runs.records.AgentCall`, read with
:meth:`~authpairs.runs.store.RecordStore.agent_calls`) and one case record per case with a
reviewed call.

A case the agent made no reviewed call for has no case record, so its reference label is read
from the run's dataset (:func:`offered_cases`), which must still be the one the run served: the
cases are checked against the run's manifest (the SHA-256 over every case, reference included).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from authpairs.analysis.runref import AgentRunError
from authpairs.runs.records import CaseRecord, RunInfo


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
