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

Below the functions, this module also names the building blocks the commands are made of (run
configuration, records, the analyses, the dataset tracks; see ``_BUILDING_BLOCKS``), so that the
CLI imports from here and nowhere deeper. Everything loads on first use: importing this module
loads none of the analysis, run or dataset code.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar

from authpairs.analysis.defaults import DEFAULT_DRAWS as DEFAULT_DRAWS
from authpairs.analysis.defaults import DEFAULT_RECORDS as DEFAULT_RECORDS
from authpairs.analysis.defaults import DEFAULT_SEED as DEFAULT_SEED
from authpairs.analysis.notebook import NotebookView, TableView

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

    from authpairs.agent.audit import audit_run as audit_run
    from authpairs.agent.run import AgentRunResult as AgentRunResult
    from authpairs.agent.serve import serve as serve_mcp
    from authpairs.agent.trajectory import Trajectory as Trajectory
    from authpairs.analysis.agent_calls import AgentRunError as AgentRunError
    from authpairs.analysis.agent_compare import AgentComparison as AgentComparison
    from authpairs.analysis.agent_compare import compare_stacks as compare_stacks
    from authpairs.analysis.agent_scores import AgentRunScore as AgentRunScore
    from authpairs.analysis.agent_scores import NotAnAgentRunError as NotAnAgentRunError
    from authpairs.analysis.agent_scores import StackScore as StackScore
    from authpairs.analysis.agent_scores import StackScores as StackScores
    from authpairs.analysis.agent_scores import load_agent_score as load_agent_score
    from authpairs.analysis.agent_scores import run_is_agent as run_is_agent
    from authpairs.analysis.compare import Comparison as Comparison
    from authpairs.analysis.compare import ComparisonError as ComparisonError
    from authpairs.analysis.compose import CompositionError as CompositionError
    from authpairs.analysis.compose import CompositionResult as Composition
    from authpairs.analysis.compose import CompositionResult as CompositionResult
    from authpairs.analysis.compose import Compositions as Compositions
    from authpairs.analysis.compose import ReviewerMatrix as ReviewerMatrix
    from authpairs.analysis.compose import compose_all as compose_all
    from authpairs.analysis.compose import ordered_selections as ordered_selections
    from authpairs.analysis.compose import route_order as route_order
    from authpairs.analysis.contrast import compare_runs as compare_runs
    from authpairs.analysis.cost import GridSpec as GridSpec
    from authpairs.analysis.cost import GridSpecError as GridSpecError
    from authpairs.analysis.cost import break_even_table as break_even_table
    from authpairs.analysis.cost import condition_from_composition as condition_from_composition
    from authpairs.analysis.cost import cost_grid as cost_grid
    from authpairs.analysis.cost import load_grid_spec as load_grid_spec
    from authpairs.analysis.family import FamilyError as FamilyError
    from authpairs.analysis.family import load_family as load_family
    from authpairs.analysis.family import run_family as run_family
    from authpairs.analysis.gate import DesignatedId as DesignatedId
    from authpairs.analysis.gate import GateInputError as GateInputError
    from authpairs.analysis.gate import GateResult as GateResult
    from authpairs.analysis.gate import read_case_ids as read_case_ids
    from authpairs.analysis.gate import run_gate as run_gate
    from authpairs.analysis.runref import RunNotFoundError as RunNotFoundError
    from authpairs.analysis.runref import UnverifiedRun as UnverifiedRun
    from authpairs.analysis.runref import UnverifiedRunError as UnverifiedRunError
    from authpairs.analysis.runref import check_verified as check_verified
    from authpairs.analysis.runref import load_run as load_run
    from authpairs.analysis.runref import load_run_checked as load_run_checked
    from authpairs.analysis.runref import unverified_allowed as unverified_allowed
    from authpairs.analysis.scoring import Score as Score
    from authpairs.analysis.scoring import Scores as Scores
    from authpairs.analysis.scoring import Tally as Tally
    from authpairs.analysis.scoring import score_by as score_by
    from authpairs.analysis.scoring import score_records as score_records
    from authpairs.analysis.scoring import unknown_group_attributes as unknown_group_attributes
    from authpairs.analysis.study import StudyCell as StudyCell
    from authpairs.analysis.study import StudyPlanError as StudyPlanError
    from authpairs.analysis.study import load_plan as load_plan
    from authpairs.analysis.study import run_study as run_study
    from authpairs.cases.dataset import Dataset as Dataset
    from authpairs.cases.dataset import DatasetError as DatasetError
    from authpairs.cases.hf import ExportError as ExportError
    from authpairs.cases.hf import export_hf as export_hf
    from authpairs.cases.models import PublicCase as PublicCase
    from authpairs.enforce.samples import generated_descriptors as generated_descriptors
    from authpairs.enforce.selftest import audit_effects as audit_effects
    from authpairs.review.guardrails.cards import read_card as read_card
    from authpairs.review.guardrails.registry import GUARDRAILS as GUARDRAILS
    from authpairs.review.guardrails.registry import option_overrides as option_overrides
    from authpairs.review.interfaces import INTERFACES as INTERFACES
    from authpairs.review.interfaces import get_interface as get_interface
    from authpairs.review.reviewers import Reviewer as Reviewer
    from authpairs.review.templates import render as render_template
    from authpairs.runs.api import open_run_cases as open_run_cases
    from authpairs.runs.audit import verify_chain as verify_chain
    from authpairs.runs.completeness import Completeness as Completeness
    from authpairs.runs.completeness import completeness as completeness
    from authpairs.runs.config import RunConfig as RunConfig
    from authpairs.runs.config import config_from_dict as config_from_dict
    from authpairs.runs.config import load_config as load_config
    from authpairs.runs.main_job import cli_base_config as cli_base_config
    from authpairs.runs.orchestrator import RunProgress as RunProgress
    from authpairs.runs.progress import ProgressDisplay as ProgressDisplay
    from authpairs.runs.records import CaseRecord as CaseRecord
    from authpairs.runs.store import RecordStore as RecordStore
    from authpairs.runs.store import RecordStoreError as RecordStoreError
    from authpairs.tracks.language.annotate import AnnotationError as AnnotationError
    from authpairs.tracks.language.annotate import export_sheets as export_sheets
    from authpairs.tracks.language.annotate import read_answers as read_answers
    from authpairs.tracks.language.annotate import read_key as read_key
    from authpairs.tracks.language.annotate import score_answers as score_answers
    from authpairs.tracks.language.baseline import classifier_baseline as classifier_baseline
    from authpairs.tracks.language.cases import load_language_dataset as load_language_dataset
    from authpairs.tracks.language.checks import check_language as check_language
    from authpairs.tracks.language.loader import ScenarioError as ScenarioError
    from authpairs.tracks.language.skeleton import write_skeleton as write_skeleton
    from authpairs.tracks.language.stats import counts_markdown as counts_markdown
    from authpairs.tracks.native.build import build_native as build_native
    from authpairs.tracks.native.byo import import_cedar as import_cedar
    from authpairs.tracks.native.byo import import_openfga as import_openfga
    from authpairs.tracks.native.errors import NativeImportError as NativeImportError
    from authpairs.tracks.native.fetch import check_tree as check_sources
    from authpairs.tracks.native.fetch import fetch_sources as fetch_sources
    from authpairs.tracks.native.sources import default_sources as default_sources
    from authpairs.tracks.native.split import DEFAULT_DEV_FRACTION as NATIVE_DEV_FRACTION
    from authpairs.tracks.native.split import DEFAULT_SEED as NATIVE_SPLIT_SEED
    from authpairs.tracks.native.stats import summary_markdown as summary_markdown
    from authpairs.tracks.native.verify import verify_native as verify_native
    from authpairs.tracks.registry import resolve_dataset as resolve_dataset

__all__ = [
    "DEFAULT_DRAWS",
    "DEFAULT_RECORDS",
    "DEFAULT_SEED",
    "GUARDRAILS",
    "INTERFACES",
    "NATIVE_DEV_FRACTION",
    "NATIVE_SPLIT_SEED",
    "AgentComparison",
    "AgentRunError",
    "AgentRunResult",
    "AgentRunScore",
    "AnnotationError",
    "CaseRecord",
    "Comparison",
    "ComparisonError",
    "Completeness",
    "Composition",
    "CompositionError",
    "CompositionResult",
    "Compositions",
    "Dataset",
    "DatasetError",
    "DesignatedId",
    "ExportError",
    "FamilyError",
    "GateInputError",
    "GateResult",
    "GridSpec",
    "GridSpecError",
    "NativeImportError",
    "NotAnAgentRunError",
    "ProgressDisplay",
    "PublicCase",
    "RecordStore",
    "RecordStoreError",
    "Records",
    "Reviewer",
    "ReviewerMatrix",
    "RunConfig",
    "RunNotFoundError",
    "RunProgress",
    "RunResult",
    "RunSpec",
    "ScenarioError",
    "Score",
    "Scores",
    "StackScore",
    "StackScores",
    "StudyCell",
    "StudyPlanError",
    "Tally",
    "Trajectory",
    "UnverifiedRun",
    "UnverifiedRunError",
    "agent_compare",
    "agent_score",
    "as_config",
    "audit_effects",
    "audit_run",
    "break_even_table",
    "build_native",
    "check_language",
    "check_sources",
    "check_verified",
    "classifier_baseline",
    "cli_base_config",
    "compare",
    "compare_runs",
    "compare_stacks",
    "completeness",
    "compose",
    "compose_all",
    "condition_from_composition",
    "config_from_dict",
    "cost_grid",
    "counts_markdown",
    "default_sources",
    "execute_async",
    "export_hf",
    "export_sheets",
    "fetch_sources",
    "gate",
    "generated_descriptors",
    "get_interface",
    "import_cedar",
    "import_openfga",
    "load_agent_score",
    "load_config",
    "load_dataset",
    "load_family",
    "load_grid_spec",
    "load_language_dataset",
    "load_plan",
    "load_run",
    "load_run_checked",
    "open_records",
    "open_run_cases",
    "option_overrides",
    "ordered_selections",
    "read_answers",
    "read_card",
    "read_case_ids",
    "read_key",
    "records_of",
    "render_template",
    "resolve_dataset",
    "route_order",
    "run",
    "run_agent",
    "run_agent_async",
    "run_async",
    "run_family",
    "run_gate",
    "run_is_agent",
    "run_study",
    "score",
    "score_answers",
    "score_by",
    "score_records",
    "serve_mcp",
    "summary_markdown",
    "unknown_group_attributes",
    "unverified_allowed",
    "verify_chain",
    "verify_native",
    "write_skeleton",
]

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

    def by(self, attribute: str) -> Scores:
        """Scores grouped by a case attribute (``family``, ``domain``, ``split``, ...): a dict
        that shows as the grouped score table."""
        from authpairs.analysis.scoring import score_by

        return score_by(self.records, attribute)

    def _title(self) -> str:
        return f"run {self.run_id}: {len(self.records)} case records"

    def __repr__(self) -> str:
        """One line: the run, its size and its headline numbers (never every record)."""
        from authpairs.analysis.notebook import percent

        score = self.scores
        return (f"<RunResult run {self.run_id!r}: {len(self.records)} case records, "
                f"{score.correct}/{score.n} correct (usable correctness "
                f"{percent(score.correct, score.n).partition(' ')[0]}), "
                f"{score.unavailable} unavailable>")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """The terminal's score table (``rich.print(result)``)."""
        from authpairs.report.tables import score_table

        yield score_table(self._title(), {"all": self.scores}, "cases")

    def table_views(self) -> list[TableView]:
        """The score table of every case (as ``authpairs run`` prints it) and what this call
        did: cases reviewed now, already recorded, infrastructure and audit failures."""
        from authpairs.analysis.scoring import score_view
        from authpairs.report.tables import USABLE_CORRECTNESS_NOTE

        view = score_view(self._title(), {"all": self.scores}, "cases")
        notes = [USABLE_CORRECTNESS_NOTE, *view.notes,
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
        """One row per case record: outcome, dispatch, whether it went through, the effect's
        execution and verification (None without enforcement), tokens, latency and the case
        attributes."""
        rows = []
        for r in self.records:
            rows.append({**r.attributes, **{
                "case_id": r.case_id, "label": r.label, "split": r.split, "cluster": r.cluster,
                "resolved": r.resolved, "status": r.status.value,
                "decision": None if r.decision is None else r.decision.value,
                "reason_code": r.reason_code, "dispatch": r.dispatch.value,
                "went_through": r.went_through,
                "executed": None if r.effect is None else r.effect.executed,
                "verified": None if r.effect is None else r.effect.verified,
                "input_tokens": r.input_tokens, "output_tokens": r.output_tokens,
                "reasoning_tokens": r.reasoning_tokens, "latency_s": r.latency_s,
                "infra_attempts": r.infra_attempts}})
        attributes = sorted({k for r in self.records for k in r.attributes}
                            - set(_RECORD_COLUMNS))
        return [*_RECORD_COLUMNS, *attributes], rows


_RECORD_COLUMNS = ("case_id", "label", "split", "cluster", "resolved", "status", "decision",
                   "reason_code", "dispatch", "went_through", "executed", "verified",
                   "input_tokens", "output_tokens", "reasoning_tokens", "latency_s",
                   "infra_attempts")
"""The columns of :meth:`RunResult.to_pandas` before the case attributes."""


def as_config(spec: RunSpec) -> RunConfig:
    """A :class:`RunConfig` from a config object, a YAML file path (read as written), or plain
    data laid over the main job's configuration (as ``RunConfig(**data)`` and ``authpairs run``
    without ``--config``)."""
    from authpairs.runs.config import RunConfig, load_config, main_job_config

    if isinstance(spec, RunConfig):
        return spec
    if isinstance(spec, str | Path):
        return load_config(spec)
    return main_job_config(dict(spec))


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
                          server: str = "in-process",
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
    if server not in ("in-process", "stdio"):
        from authpairs.errors import ConfigError

        raise ConfigError(f"unknown MCP server mode {server!r} (in-process or stdio)")
    mode: Literal["in-process", "stdio"] = "stdio" if server == "stdio" else "in-process"
    return await run_and_record(config, case_ids=case_ids, server=mode, on_case=on_case)


def run_agent(spec: RunSpec, *, agent: str | None = None, agent_model: str | None = None,
              case_ids: Sequence[str] = (), server: str = "in-process") -> AgentRunResult:
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
          default_records: str | Path = DEFAULT_RECORDS) -> Score | Scores:
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
    from authpairs.analysis.agent_scores import load_agent_score

    return load_agent_score(run, default_records)


def agent_compare(before: str, after: str, *, draws: int = DEFAULT_DRAWS,
                  seed: int = DEFAULT_SEED,
                  default_records: str | Path = DEFAULT_RECORDS) -> AgentComparison:
    """Request-level comparison of two agent runs (two stacks on the same cases): each
    case's transition of stack outcome, with ``compare``'s statistics."""
    from authpairs.analysis.agent_compare import compare_stacks
    from authpairs.analysis.agent_scores import load_agent_score

    return compare_stacks(load_agent_score(before, default_records),
                          load_agent_score(after, default_records), draws=draws, seed=seed)


# -- the commands' own steps -----------------------------------------------------------------
async def execute_async(config: RunConfig, *, progress: bool | ProgressDisplay = True
                        ) -> RunProgress:
    """Run (or resume) ``config`` and return what this invocation did: cases reviewed now,
    already recorded, recorded or claimed by another process, infrastructure failures and their
    causes. :func:`run_async` adds the records and scores."""
    from authpairs.runs.api import run_async as run_and_record

    return await run_and_record(config, progress=progress)


# -- building blocks of the commands, loaded on first use ------------------------------------
_BUILDING_BLOCKS: dict[str, tuple[str, str]] = {
    alias: (module, name or alias) for module, names in {
        "authpairs.agent.run": ["AgentRunResult"],
        "authpairs.agent.audit": ["audit_run"],
        "authpairs.agent.serve": ["serve_mcp=serve"],
        "authpairs.agent.trajectory": ["Trajectory"],
        "authpairs.analysis.agent_calls": ["AgentRunError"],
        "authpairs.analysis.agent_compare": ["AgentComparison", "compare_stacks"],
        "authpairs.analysis.agent_scores": ["AgentRunScore", "NotAnAgentRunError",
                                            "StackScore", "StackScores", "load_agent_score",
                                            "run_is_agent"],
        "authpairs.analysis.compare": ["Comparison", "ComparisonError"],
        "authpairs.analysis.compose": ["Composition=CompositionResult", "CompositionError",
                                       "CompositionResult", "Compositions", "ReviewerMatrix",
                                       "compose_all", "ordered_selections", "route_order"],
        "authpairs.analysis.contrast": ["compare_runs"],
        "authpairs.analysis.cost": ["GridSpec", "GridSpecError", "break_even_table",
                                    "condition_from_composition", "cost_grid", "load_grid_spec"],
        "authpairs.analysis.family": ["FamilyError", "load_family", "run_family"],
        "authpairs.analysis.gate": ["DesignatedId", "GateInputError", "GateResult",
                                    "read_case_ids", "run_gate"],
        "authpairs.analysis.runref": ["RunNotFoundError", "UnverifiedRun", "UnverifiedRunError",
                                      "check_verified", "load_run", "load_run_checked",
                                      "unverified_allowed"],
        "authpairs.analysis.scoring": ["Score", "Scores", "Tally", "score_by", "score_records",
                                       "unknown_group_attributes"],
        "authpairs.analysis.study": ["StudyCell", "StudyPlanError", "load_plan", "run_study"],
        "authpairs.cases.dataset": ["Dataset", "DatasetError"],
        "authpairs.cases.hf": ["ExportError", "export_hf"],
        "authpairs.cases.models": ["PublicCase"],
        "authpairs.enforce.samples": ["generated_descriptors"],
        "authpairs.enforce.selftest": ["audit_effects"],
        "authpairs.review.guardrails.cards": ["read_card"],
        "authpairs.review.guardrails.registry": ["GUARDRAILS", "option_overrides"],
        "authpairs.review.interfaces": ["INTERFACES", "get_interface"],
        "authpairs.review.reviewers": ["Reviewer"],
        "authpairs.review.templates": ["render_template=render"],
        "authpairs.runs.api": ["open_run_cases"],
        "authpairs.runs.audit": ["verify_chain"],
        "authpairs.runs.completeness": ["Completeness", "completeness"],
        "authpairs.runs.config": ["RunConfig", "config_from_dict", "load_config"],
        "authpairs.runs.main_job": ["cli_base_config"],
        "authpairs.runs.orchestrator": ["RunProgress"],
        "authpairs.runs.progress": ["ProgressDisplay"],
        "authpairs.runs.records": ["CaseRecord"],
        "authpairs.runs.store": ["RecordStore", "RecordStoreError"],
        "authpairs.tracks.language.annotate": ["AnnotationError", "export_sheets",
                                               "read_answers", "read_key", "score_answers"],
        "authpairs.tracks.language.baseline": ["classifier_baseline"],
        "authpairs.tracks.language.cases": ["load_language_dataset"],
        "authpairs.tracks.language.checks": ["check_language"],
        "authpairs.tracks.language.loader": ["ScenarioError"],
        "authpairs.tracks.language.skeleton": ["write_skeleton"],
        "authpairs.tracks.language.stats": ["counts_markdown"],
        "authpairs.tracks.native.build": ["build_native"],
        "authpairs.tracks.native.byo": ["import_cedar", "import_openfga"],
        "authpairs.tracks.native.errors": ["NativeImportError"],
        "authpairs.tracks.native.fetch": ["check_sources=check_tree", "fetch_sources"],
        "authpairs.tracks.native.sources": ["default_sources"],
        "authpairs.tracks.native.split": ["NATIVE_DEV_FRACTION=DEFAULT_DEV_FRACTION",
                                          "NATIVE_SPLIT_SEED=DEFAULT_SEED"],
        "authpairs.tracks.native.stats": ["summary_markdown"],
        "authpairs.tracks.native.verify": ["verify_native"],
        "authpairs.tracks.registry": ["resolve_dataset"],
    }.items() for alias, _, name in (entry.partition("=") for entry in names)
}
"""Name here -> (module, name there) of each building block the commands use."""


def __getattr__(name: str) -> Any:
    """Load a building block from its module on first use (then it is a plain global)."""
    if name in _BUILDING_BLOCKS:
        module, attribute = _BUILDING_BLOCKS[name]
        value = getattr(importlib.import_module(module), attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'authpairs.api' has no attribute {name!r}")
