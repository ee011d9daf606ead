"""The public Python API: everything the CLI does, callable from code and notebooks.

>>> import authpairs
>>> result = authpairs.run({"dataset": "examples", "reviewer": {"baseline": "always-allow"},
...                         "records": "/tmp/ap.sqlite"})
>>> result.scores.usable_correctness                                         # doctest: +SKIP
0.5
>>> authpairs.compare("/tmp/ap.sqlite::run-a", "/tmp/ap.sqlite::run-b")     # doctest: +SKIP

``run`` works inside a running event loop (Jupyter): it then runs the review in a worker thread
with its own loop. ``import authpairs`` gives every name of ``__all__``: the functions defined
here, and the documented types they take and return, which live in their own modules and load
on first use (``_TYPES``), so importing this module loads none of the run or dataset code and of
the analysis only its defaults and table model (no numpy, no pydantic). Every other module is
internal (the commands import what they need from where it lives).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

import authpairs.main_job as main_job
from authpairs.analysis.defaults import DEFAULT_DRAWS, DEFAULT_RECORDS, DEFAULT_SEED
from authpairs.analysis.notebook import NotebookView, TableView
from authpairs.errors import AuthpairsError
from authpairs.main_job import AgentServer

if TYPE_CHECKING:
    from authpairs.agent.run import AgentRunResult as AgentRunResult
    from authpairs.agent.trajectory import Trajectory as Trajectory
    from authpairs.analysis.agent_runs import AgentRunScore as AgentRunScore
    from authpairs.analysis.compare import Comparison as Comparison
    from authpairs.analysis.compose import CompositionResult as Composition
    from authpairs.analysis.compose import Compositions as Compositions
    from authpairs.analysis.compose import ReviewerMatrix as ReviewerMatrix
    from authpairs.analysis.contrast import Contrast as Contrast
    from authpairs.analysis.contrast import compare_runs as compare_runs
    from authpairs.analysis.gate import DesignatedId
    from authpairs.analysis.gate import GateResult as GateResult
    from authpairs.analysis.runref import unverified_allowed as unverified_allowed
    from authpairs.analysis.scoring import Score as Score
    from authpairs.analysis.scoring import Scores as Scores
    from authpairs.cases.dataset import Dataset as Dataset
    from authpairs.review.reviewers import Reviewer as Reviewer
    from authpairs.runs.config import RunConfig as RunConfig
    from authpairs.runs.progress import ProgressDisplay as ProgressDisplay
    from authpairs.runs.records import CaseRecord as CaseRecord
    from authpairs.runs.store import RecordStore as RecordStore

_TYPES = {
    "AgentRunResult": "authpairs.agent.run",
    "AgentRunScore": "authpairs.analysis.agent_runs",
    "CaseRecord": "authpairs.runs.records",
    "Comparison": "authpairs.analysis.compare",
    "Contrast": "authpairs.analysis.contrast",
    "Composition": "authpairs.analysis.compose:CompositionResult",
    "Compositions": "authpairs.analysis.compose",
    "Dataset": "authpairs.cases.dataset",
    "GateResult": "authpairs.analysis.gate",
    "ProgressDisplay": "authpairs.runs.progress",
    "RecordStore": "authpairs.runs.store",
    "Reviewer": "authpairs.review.reviewers",
    "ReviewerMatrix": "authpairs.analysis.compose",
    "RunConfig": "authpairs.runs.config",
    "Score": "authpairs.analysis.scoring",
    "Scores": "authpairs.analysis.scoring",
    "Trajectory": "authpairs.agent.trajectory",
    "compare_runs": "authpairs.analysis.contrast",
    "unverified_allowed": "authpairs.analysis.runref",
}
"""The documented names that live in other modules: name -> ``module`` or ``module:name``."""

__all__ = [
    "DEFAULT_DRAWS", "DEFAULT_RECORDS", "DEFAULT_SEED", "AgentRunResult", "AgentRunScore",
    "AuthpairsError", "CaseRecord", "Comparison", "Composition", "Compositions", "Contrast",
    "Dataset", "GateResult", "ProgressDisplay", "RecordStore", "Records", "Reviewer",
    "ReviewerMatrix", "RunConfig", "RunResult", "RunSpec", "Score", "Scores", "Trajectory",
    "agent_compare", "agent_score", "as_config", "compare", "compare_runs", "compose", "gate",
    "load_dataset", "open_records", "records_of", "run", "run_agent", "run_agent_async",
    "run_async", "score", "unverified_allowed"]
"""Written out, the form type checkers read (a test keeps it equal to ``_TYPES`` and the names
defined and imported here)."""

RunSpec: TypeAlias = "RunConfig | Mapping[str, Any] | str | Path"
"""A run configuration: a :class:`RunConfig`, plain data, or a YAML file path."""
Records: TypeAlias = "Sequence[CaseRecord] | str"
"""Case records, or a run address (``RUN_ID`` or ``PATH::RUN_ID``)."""


@dataclass(repr=False)
class RunResult(NotebookView):
    """What a run produced: its id, every case record and the scores.

    ``repr`` is one line; ``print`` writes the score table and what this call did; in a
    notebook it shows the score table once (``_repr_html_``); ``to_pandas()`` gives one row per
    case record; ``rich.print`` draws the terminal's score table."""

    run_id: str
    config: RunConfig
    records: list[CaseRecord]
    scores: Score
    reviewed_now: int = 0
    already_done: int = 0
    infrastructure_failed: list[str] = field(default_factory=list)
    audit_failures: list[str] = field(default_factory=list)

    def by(self, attribute: str) -> Scores[Score]:
        """Scores grouped by a case attribute (``family``, ``domain``, ``split``, ...): a dict
        that shows as the grouped score table."""
        from authpairs.analysis.scoring import score_by

        return score_by(self.records, attribute)

    def _title(self) -> str:
        return f"run {self.run_id}: {len(self.records)} case records"

    def __repr__(self) -> str:
        """One line: the run, its size and its headline numbers (never every record)."""
        from authpairs.analysis.formatting import percent

        score = self.scores
        return (f"<RunResult run {self.run_id!r}: {len(self.records)} case records, "
                f"{score.correct}/{score.n} correct (usable correctness "
                f"{percent(score.correct, score.n).partition(' ')[0]}), "
                f"{score.unavailable} unavailable>")

    def table_views(self) -> list[TableView]:
        """The score table of every case (as ``authpairs run`` prints it) and what this call
        did: cases reviewed now, already recorded, infrastructure and audit failures."""
        from authpairs.analysis.scoring import score_view

        view = score_view(self._title(), {"all": self.scores}, "cases")
        notes = [*view.notes,
                 f"this call: {self.reviewed_now} reviewed now, {self.already_done} already "
                 "recorded"]
        for what, ids in (("infrastructure failures (no record; run again to retry)",
                           self.infrastructure_failed),
                          ("audit failures", self.audit_failures)):
            if ids:
                notes.append(f"{what}: {len(ids)}: " + ", ".join(ids[:10])
                             + (", ..." if len(ids) > 10 else ""))
        return [TableView(view.title, view.headers, view.rows, notes)]

    def frame(self) -> tuple[list[str], list[dict[str, Any]]]:
        """One row per case record: its outcome as every view shows it
        (:meth:`~authpairs.analysis.outcomes.CaseOutcome.to_dict`: label, grouping fields,
        outcome, went through, reason, verified, the case attributes), then its tokens, latency
        and infrastructure retries."""
        from authpairs.analysis.outcomes import case_outcome

        costs = ("input_tokens", "output_tokens", "reasoning_tokens", "latency_s",
                 "infra_attempts")
        rows = [{**case_outcome(r).to_dict(), **{k: getattr(r, k) for k in costs}}
                for r in self.records]
        return list(dict.fromkeys(k for row in rows for k in row)) or ["case_id"], rows


def as_config(spec: RunSpec) -> RunConfig:
    """A :class:`RunConfig` from a config object, a YAML file path or plain data (what either
    leaves out is the main job's, as for ``authpairs run``)."""
    from authpairs.runs.config import RunConfig, config_from_dict, load_config

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
    from authpairs.analysis.scoring import score_records
    from authpairs.runs.api import run_async as run_and_record
    from authpairs.runs.store import RecordStore

    config = as_config(spec)
    state = await run_and_record(config, progress=progress, dataset=dataset, reviewer=reviewer)
    with RecordStore(config.records) as store:
        records = store.case_records(state.run_id)
    return RunResult(run_id=state.run_id, config=config, records=records,
                     scores=score_records(records), reviewed_now=state.completed_now,
                     already_done=state.already_done,
                     infrastructure_failed=list(state.infrastructure_failed),
                     audit_failures=list(state.audit_failures))


_T = TypeVar("_T")


def _run_sync(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """Run ``coroutine`` to its end: in this thread, or in a worker thread of its own when an
    event loop is already running here (a notebook)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def run(spec: RunSpec, *, progress: bool | ProgressDisplay = False,
        dataset: Dataset | None = None, reviewer: Reviewer | None = None) -> RunResult:
    """Synchronous :func:`run_async`; safe to call where an event loop is already running."""
    return _run_sync(run_async(spec, progress=progress, dataset=dataset, reviewer=reviewer))


async def run_agent_async(spec: RunSpec, *, agent: str | None = None,
                          agent_model: str | None = None, case_ids: Sequence[str] = (),
                          server: AgentServer = main_job.AGENT_SERVER,
                          on_case: Callable[[Trajectory], None] | None = None
                          ) -> AgentRunResult:
    """An agent run (``authpairs run --agent``): the configuration's agent model acts on its
    cases as an agent over MCP and its reviewer reviews every tool call; returns what was
    recorded (trajectories, calls, what the agent proposed per case, case records).

    The agent model is the configuration's ``agent`` section, or ``agent``: the ``--agent``
    shorthand (``embedded``, an http(s) base URL with ``agent_model``, a ``.yaml`` agent
    file, ``module:function``). ``server`` is ``in-process`` (default) or ``stdio`` (an
    ``authpairs mcp serve`` child process); ``on_case`` is told each case's trajectory."""
    from authpairs.agent.run import run_agent as run_and_record
    from authpairs.runs.agent_config import agent_from_spec

    config = as_config(spec)
    if agent is not None:
        config = config.model_copy(update={"agent": agent_from_spec(agent, agent_model)})
    return await run_and_record(config, case_ids=case_ids, server=server, on_case=on_case)


def run_agent(spec: RunSpec, *, agent: str | None = None, agent_model: str | None = None,
              case_ids: Sequence[str] = (),
              server: AgentServer = main_job.AGENT_SERVER) -> AgentRunResult:
    """Synchronous :func:`run_agent_async`; safe to call where an event loop is already
    running."""
    return _run_sync(run_agent_async(spec, agent=agent, agent_model=agent_model,
                                     case_ids=case_ids, server=server))


def load_dataset(name: str | Path, split: str | None = None,
                 limit: int | None = None) -> Dataset:
    """A dataset by track name (``language``, ``native``, ``examples``) or JSONL path."""
    from authpairs.tracks.registry import resolve_dataset

    return resolve_dataset(str(name)).select(split, limit)


def open_records(path: str | Path = DEFAULT_RECORDS) -> RecordStore:
    """Open a records file for reading (use as a context manager): ``list_runs``,
    ``case_records``, ...; works on read-only files and never creates one."""
    from authpairs.runs.store import RecordStore

    return RecordStore(Path(path), readonly=True)


def records_of(records: Records, default_records: str | Path = DEFAULT_RECORDS
               ) -> list[CaseRecord]:
    """Case records as given, or loaded from a run address (``RUN_ID`` / ``PATH::RUN_ID``)."""
    from authpairs.analysis.runref import load_run

    if isinstance(records, str):
        return load_run(records, default_records)[1]
    return list(records)


def _names(*runs: tuple[Records, str]) -> list[str]:
    """The name of each run: its address when given as one, else the default name."""
    return [r if isinstance(r, str) else default for r, default in runs]


def score(records: Records, by: str | None = None, *,
          default_records: str | Path = DEFAULT_RECORDS) -> Score | Scores[Score]:
    """Scores of a run (all cases), or grouped by an attribute when ``by`` is given."""
    from authpairs.analysis.scoring import score_by, score_records

    chosen = records_of(records, default_records)
    return score_records(chosen) if by is None else score_by(chosen, by)


def compare(before: Records, after: Records, *,
            default_records: str | Path = DEFAULT_RECORDS) -> Comparison:
    """Request-level comparison: which lawful requests were retained, lost or gained."""
    from authpairs.analysis.compare import compare_records

    names = _names((before, "before"), (after, "after"))
    return compare_records(records_of(before, default_records),
                           records_of(after, default_records),
                           before_run=names[0], after_run=names[1])


def compose(runs: Mapping[str, Records] | Sequence[str], *,
            default_records: str | Path = DEFAULT_RECORDS
            ) -> tuple[ReviewerMatrix, Compositions]:
    """All-must-allow replay of every ordered selection of the given reviewer runs: the
    aligned matrix and every order's :class:`Composition` (a list that shows as a table)."""
    from authpairs.analysis.compose import compose_all

    named: Mapping[str, Records] = (runs if isinstance(runs, Mapping)
                                    else {address: address for address in runs})
    return compose_all({name: records_of(r, default_records) for name, r in named.items()})


def gate(baseline: Records, candidate: Records, *,
         required: Sequence[str] | str | Path,
         forbidden: Sequence[str] | str | Path | None = None,
         default_records: str | Path = DEFAULT_RECORDS) -> GateResult:
    """The acceptance test for a guardrail change; ``required``/``forbidden`` are id lists or
    files with one case id per line."""
    from authpairs.analysis.gate import read_case_ids, run_gate

    def ids(value: Sequence[str] | str | Path) -> Sequence[DesignatedId] | Sequence[str]:
        return read_case_ids(value) if isinstance(value, str | Path) else value

    names = _names((baseline, "baseline"), (candidate, "candidate"))
    return run_gate(records_of(baseline, default_records),
                    records_of(candidate, default_records), required=ids(required),
                    forbidden=None if forbidden is None else ids(forbidden),
                    baseline_name=names[0], candidate_name=names[1])


def agent_score(run: str, *, default_records: str | Path = DEFAULT_RECORDS) -> AgentRunScore:
    """The agent + guardrail stack score of an agent run (``RUN_ID`` or ``PATH::RUN_ID``):
    every offered case's outcome (agent declined, guardrail blocked, unavailable, executed);
    ``.overall`` and ``.by(attribute)`` give the tables, ``to_pandas()`` one row per case."""
    from authpairs.analysis.agent_runs import load_agent_score

    return load_agent_score(run, default_records)


def agent_compare(before: str, after: str, *, draws: int = DEFAULT_DRAWS,
                  seed: int = DEFAULT_SEED,
                  default_records: str | Path = DEFAULT_RECORDS) -> Contrast:
    """Request-level comparison of two agent runs (two stacks on the same cases): each
    case's transition of stack outcome, with ``compare``'s statistics (the :class:`Contrast`
    of two guardrail runs, in the stack's names)."""
    from authpairs.analysis.agent_runs import compare_stacks, load_agent_score

    return compare_stacks(load_agent_score(before, default_records),
                          load_agent_score(after, default_records), draws=draws, seed=seed)


def __dir__() -> list[str]:
    """The module's names with the documented types not loaded yet."""
    return sorted({*globals(), *_TYPES})


def __getattr__(name: str) -> Any:
    """Load a documented type from its module on first use (then it is a plain global)."""
    if name in _TYPES:
        module, _, attribute = _TYPES[name].partition(":")
        value = getattr(importlib.import_module(module), attribute or name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'authpairs.api' has no attribute {name!r}")
