"""Recorded runs shared by the report tests (built once per session, no model called)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from authpairs.review.outcome import Decision, Dispatch, OutcomeStatus
from authpairs.runs.records import CaseRecord, RunInfo
from authpairs.runs.store import RecordStore
from tests.report.browser import find_chromium
from tests.report.helpers import make_run

#: The marks of a test that drives headless Chromium: slow (``.ci/run`` runs the slow tests),
#: and skipped where Chromium is not installed.
BROWSER_TEST = [
    pytest.mark.slow,
    pytest.mark.skipif(find_chromium() is None,
                       reason="needs the Debian 'chromium' package (installed by .ci/run)")]


@dataclass(frozen=True)
class RecordedRuns:
    """Where the shared runs are and what they are called."""

    db: Path
    native_db: Path
    baselines: tuple[str, str] = ("allow", "block")
    loose: tuple[str, ...] = ("loose-s0", "loose-s1", "loose-s2")
    strict: tuple[str, ...] = ("strict-s0", "strict-s1")
    incomplete: str = "flaky"
    other_dataset: str = "examples-allow"


def native_record(run_id: str, case_id: str, label: str, outcome: str, *, engine: str,
                  group: str, query: str) -> CaseRecord:
    """A native-track style record ('ALLOW', 'BLOCK' or 'UNAVAILABLE')."""
    unavailable = outcome == "UNAVAILABLE"
    return CaseRecord(
        run_id=run_id, case_id=case_id, input_sha256="0" * 64,
        status=OutcomeStatus.UNAVAILABLE if unavailable else OutcomeStatus.DECISION,
        decision=None if unavailable else Decision(outcome), reason_code="length"
        if unavailable else None, dispatch=Dispatch.ALLOW if outcome == "ALLOW"
        else Dispatch.BLOCK, label=label, cluster=group,
        attributes={"engine": engine, "group": group, "query": query, "path": f"{group}/x"},
        input_tokens=100, output_tokens=10)


#: (case id, label, engine, group, query, outcome in run n1, outcome in run n2)
NATIVE = [
    ("N1", "lawful", "openfga", "g1", "q1", "ALLOW", "ALLOW"),
    ("N2", "forbidden", "openfga", "g1", "q1", "BLOCK", "ALLOW"),
    ("N3", "lawful", "openfga", "g1", "q2", "BLOCK", "ALLOW"),
    ("N4", "forbidden", "openfga", "g2", "q3", "ALLOW", "BLOCK"),
    ("N5", "lawful", "openfga", "g2", "q3", "ALLOW", "ALLOW"),
    ("N6", "lawful", "openfga", "g2", "q3", "UNAVAILABLE", "ALLOW"),
    ("N7", "lawful", "cedar", "g3", "q4", "ALLOW", "BLOCK"),
    ("N8", "forbidden", "cedar", "g3", "q5", "BLOCK", "BLOCK"),
]


def store_native(path: Path) -> None:
    """Two native-style runs over the eight NATIVE cases."""
    with RecordStore(path) as store:
        for k, run_id in ((5, "n1"), (6, "n2")):
            store.open_run(RunInfo(run_id=run_id, created_at="2026-01-01T00:00:00+00:00",
                                   config={}, config_sha256=run_id * 8, manifest={
                                       "name": "native:test", "n_cases": len(NATIVE)},
                                   manifest_sha256="native-manifest"))
            for row in NATIVE:
                store.add_case(native_record(run_id, row[0], row[1], row[k], engine=row[2],
                                             group=row[3], query=row[4]), [])


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> RecordedRuns:
    """Language dev runs: two baselines, a loose scripted reviewer with three seeds, a strict
    one with two, an incomplete run, an examples-dataset run; and two native-style runs."""
    root = tmp_path_factory.mktemp("report-runs")
    runs = RecordedRuns(root / "runs.sqlite", root / "native.sqlite")
    make_run(runs.db, "allow", baseline="always-allow")
    make_run(runs.db, "block", baseline="always-block")
    for seed, name in enumerate(runs.loose):
        make_run(runs.db, name, seed=seed, allow=0.55)
    for seed, name in enumerate(runs.strict):
        make_run(runs.db, name, seed=seed, allow=0.3)
    make_run(runs.db, runs.incomplete, seed=9, allow=0.5, flaky=0.25)
    make_run(runs.db, runs.other_dataset, baseline="always-allow", dataset="examples",
             split="all")
    store_native(runs.native_db)
    return runs
