"""Record factories for analysis tests (records are built directly, no model is called)."""

from __future__ import annotations

from pathlib import Path

from authpairs.review.outcome import Decision, Dispatch, OutcomeStatus
from authpairs.runs.records import CaseRecord, EffectRecord, RunInfo
from authpairs.runs.store import RecordStore


def rec(case_id: str, label: str = "lawful", outcome: str = "ALLOW", *, cluster: str = "s1",
        run_id: str = "r", path: str = "", resolved: bool = True, effect: bool | None = None,
        tin: int = 0, tout: int = 0) -> CaseRecord:
    """A case record. ``outcome``: 'ALLOW', 'BLOCK', 'UNKNOWN' (abstention) or 'UNAVAILABLE'.

    ``effect=True`` attaches an enforced effect record consistent with the dispatch.
    """
    if outcome == "UNAVAILABLE":
        status, decision = OutcomeStatus.UNAVAILABLE, None
    elif outcome == "UNKNOWN":
        status, decision = OutcomeStatus.ABSTENTION, Decision.UNKNOWN
    else:
        status, decision = OutcomeStatus.DECISION, Decision(outcome)
    dispatch = Dispatch.ALLOW if outcome == "ALLOW" else Dispatch.BLOCK
    eff = None
    if effect:
        executed = dispatch is Dispatch.ALLOW
        eff = EffectRecord(executed=executed, verified=executed)
    attrs = {"path": path} if path else {}
    return CaseRecord(run_id=run_id, case_id=case_id, input_sha256="0" * 64, status=status,
                      decision=decision, dispatch=dispatch, label=label, resolved=resolved,
                      cluster=cluster, attributes=attrs, input_tokens=tin, output_tokens=tout,
                      effect=eff)


def store_run(path: Path, run_id: str, records: list[CaseRecord]) -> None:
    """Write a run with the given records into a RecordStore file."""
    with RecordStore(path) as store:
        store.open_run(RunInfo(run_id=run_id, created_at="2026-01-01T00:00:00+00:00",
                               config={}, config_sha256=run_id, manifest={},
                               manifest_sha256="m"))
        for r in records:
            store.add_case(r.model_copy(update={"run_id": run_id}), [])


def lawful_pair_runs(before: list[bool], after: list[bool], *, per_cluster: int = 2
                     ) -> tuple[list[CaseRecord], list[CaseRecord]]:
    """Two runs over lawful cases L000.. grouped ``per_cluster`` to a scenario."""
    a, b = [], []
    for i, (x, y) in enumerate(zip(before, after, strict=True)):
        cl = f"s{i // per_cluster:02d}"
        a.append(rec(f"L{i:03d}", "lawful", "ALLOW" if x else "BLOCK", cluster=cl, run_id="A"))
        b.append(rec(f"L{i:03d}", "lawful", "ALLOW" if y else "BLOCK", cluster=cl, run_id="B"))
    return a, b
