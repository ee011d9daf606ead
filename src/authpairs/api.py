"""The public Python API: everything the CLI does, callable from code and notebooks.

>>> import authpairs
>>> result = authpairs.run({"dataset": "examples", "reviewer": {"baseline": "always-allow"},
...                         "records": "/tmp/ap.sqlite"})
>>> result.scores.usable_correctness                                         # doctest: +SKIP
0.5
>>> authpairs.compare("/tmp/ap.sqlite::run-a", "/tmp/ap.sqlite::run-b")     # doctest: +SKIP

``run`` works inside a running event loop (Jupyter): it then runs the review in a worker thread
with its own loop. The CLI (:mod:`authpairs.commands`) only parses arguments and prints what these
functions return.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult

from authpairs.analysis.compare import Comparison, compare_records
from authpairs.analysis.compose import CompositionResult, ReviewerMatrix, compose_all
from authpairs.analysis.gate import DesignatedId, GateResult, read_case_ids, run_gate
from authpairs.analysis.runref import DEFAULT_RECORDS, load_run
from authpairs.analysis.scoring import Score, score_by, score_records
from authpairs.cases.dataset import Dataset
from authpairs.review.reviewers import Reviewer
from authpairs.runs.api import run_async as _run_async
from authpairs.runs.config import RunConfig, config_from_dict, load_config
from authpairs.runs.progress import ProgressDisplay
from authpairs.runs.records import CaseRecord
from authpairs.runs.store import RecordStore
from authpairs.tracks.registry import resolve_dataset

RunSpec = RunConfig | Mapping[str, Any] | str | Path
"""A run configuration: a :class:`RunConfig`, plain data, or a YAML file path."""
Records = Sequence[CaseRecord] | str
"""Case records, or a run address (``RUN_ID`` or ``PATH::RUN_ID``)."""


@dataclass
class RunResult:
    """What a run produced: its id, every case record and the scores. Renders itself."""

    run_id: str
    config: RunConfig
    records: list[CaseRecord]
    scores: Score
    reviewed_now: int = 0
    already_done: int = 0
    infrastructure_failed: list[str] = field(default_factory=list)
    audit_failures: list[str] = field(default_factory=list)

    def by(self, attribute: str) -> dict[str, Score]:
        """Scores grouped by a case attribute (``family``, ``domain``, ``split``, ...)."""
        return score_by(self.records, attribute)

    def _title(self) -> str:
        return f"run {self.run_id}: {len(self.records)} case records"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from authpairs.report.tables import score_table

        yield score_table(self._title(), {"all": self.scores}, "cases")

    def _repr_html_(self) -> str:
        from authpairs.report.tables import score_table

        console = Console(record=True, width=120, file=io.StringIO())
        console.print(score_table(self._title(), {"all": self.scores}, "cases"))
        return console.export_html(inline_styles=True)


def as_config(spec: RunSpec) -> RunConfig:
    """A :class:`RunConfig` from a config object, plain data or a YAML file path."""
    if isinstance(spec, RunConfig):
        return spec
    if isinstance(spec, str | Path):
        return load_config(spec)
    return config_from_dict(dict(spec))


async def run_async(spec: RunSpec, *, progress: bool | ProgressDisplay = False,
                    dataset: Dataset | None = None,
                    reviewer: Reviewer | None = None) -> RunResult:
    """Run (or resume) a configured run and return its :class:`RunResult`.

    ``dataset`` and ``reviewer`` replace the configured ones (your own cases or guardrail);
    ``progress`` is False (silent, the default), True (a rich bar) or a
    :class:`~authpairs.runs.progress.ProgressDisplay` of your own.
    """
    config = as_config(spec)
    state = await _run_async(config, progress=progress, dataset=dataset, reviewer=reviewer)
    with RecordStore(config.records) as store:
        records = store.case_records(state.run_id)
    return RunResult(run_id=state.run_id, config=config, records=records,
                     scores=score_records(records), reviewed_now=state.completed_now,
                     already_done=state.already_done,
                     infrastructure_failed=list(state.infrastructure_failed),
                     audit_failures=list(state.audit_failures))


def run(spec: RunSpec, *, progress: bool | ProgressDisplay = False,
        dataset: Dataset | None = None, reviewer: Reviewer | None = None) -> RunResult:
    """Synchronous :func:`run_async`; safe to call where an event loop is already running."""
    coroutine = run_async(spec, progress=progress, dataset=dataset, reviewer=reviewer)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def load_dataset(name: str | Path, split: str | None = None,
                 limit: int | None = None) -> Dataset:
    """A dataset by track name (``language``, ``native``, ``examples``) or JSONL path."""
    return resolve_dataset(str(name)).select(split, limit)


def open_records(path: str | Path = DEFAULT_RECORDS) -> RecordStore:
    """Open a records file (use as a context manager): ``list_runs``, ``case_records``, ..."""
    return RecordStore(Path(path))


def records_of(records: Records, default_records: str | Path = DEFAULT_RECORDS
               ) -> list[CaseRecord]:
    """Case records as given, or loaded from a run address (``RUN_ID`` / ``PATH::RUN_ID``)."""
    if isinstance(records, str):
        return load_run(records, default_records)[1]
    return list(records)


def score(records: Records, by: str | None = None, *,
          default_records: str | Path = DEFAULT_RECORDS) -> Score | dict[str, Score]:
    """Scores of a run (all cases), or grouped by an attribute when ``by`` is given."""
    chosen = records_of(records, default_records)
    return score_records(chosen) if by is None else score_by(chosen, by)


def compare(before: Records, after: Records, *,
            default_records: str | Path = DEFAULT_RECORDS) -> Comparison:
    """Request-level comparison: which lawful requests were retained, lost or gained."""
    names = [r if isinstance(r, str) else default for r, default in
             ((before, "before"), (after, "after"))]
    return compare_records(records_of(before, default_records),
                           records_of(after, default_records),
                           before_run=names[0], after_run=names[1])


def compose(runs: Mapping[str, Records] | Sequence[str], *,
            default_records: str | Path = DEFAULT_RECORDS
            ) -> tuple[ReviewerMatrix, list[CompositionResult]]:
    """All-must-allow replay of every ordered selection of the given reviewer runs."""
    named: Mapping[str, Records] = (runs if isinstance(runs, Mapping)
                                    else {address: address for address in runs})
    return compose_all({name: records_of(r, default_records) for name, r in named.items()})


def gate(baseline: Records, candidate: Records, *,
         required: Sequence[str] | str | Path,
         forbidden: Sequence[str] | str | Path | None = None,
         default_records: str | Path = DEFAULT_RECORDS) -> GateResult:
    """The acceptance test for a guardrail change; ``required``/``forbidden`` are id lists or
    files with one case id per line."""

    def ids(value: Sequence[str] | str | Path) -> Sequence[DesignatedId] | Sequence[str]:
        return read_case_ids(value) if isinstance(value, str | Path) else value

    return run_gate(records_of(baseline, default_records),
                    records_of(candidate, default_records), required=ids(required),
                    forbidden=None if forbidden is None else ids(forbidden))
