"""Studies: configurations x seeds on the same cases, then a Holm-adjusted family of contrasts.

A plan is a YAML file::

    name: matched-interfaces           # optional
    records: runs/study.sqlite         # optional; overrides base.records for every run
    base:                              # RunConfig fields shared by every run
      dataset: language
      split: test
    factors:                           # ordered; each level is a mapping of dotted-key overrides
      model:
        qwen-9b:  {reviewer.backend.model: Qwen/Qwen3.5-9B}
        qwen-27b: {reviewer.backend.model: Qwen/Qwen3.5-27B}
      interface:
        direct: {reviewer.interface: direct}
        schema: {reviewer.interface: schema}
    seeds: [0, 1, 2]                   # set as reviewer.sampling.seed; omit for one unseeded run
    compare: interface                 # default: the last factor
    pairs: [[direct, schema]]          # optional; default every pair of levels, in level order
    analysis: {draws: 10000, seed: 39039}

Every combination of factor levels and seed is one run (its id derives from the configuration
hash, so re-running the study resumes every run). The contrast family holds, for every fixed
combination of the *other* factors and seed, each pair of levels of the ``compare`` factor
(earlier level = before, later = after): with 2 models x 4 interfaces x 3 seeds that is
C(4,2) x 2 x 3 = 36 contrasts. Holm adjusts over the whole family.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from authpairs.analysis.contrast import Contrast, adjust_family, compare_runs
from authpairs.analysis.stats import DEFAULT_DRAWS, DEFAULT_SEED
from authpairs.errors import ConfigError
from authpairs.runs.config import RunConfig, config_from_dict
from authpairs.runs.records import CaseRecord
from authpairs.yamlfiles import first_error, read_yaml_mapping

SEED_KEY = "reviewer.sampling.seed"


class StudyPlanError(ConfigError):
    """A study plan is malformed; the message names the file and field."""


class AnalysisSettings(BaseModel):
    """Statistics settings of a study."""

    model_config = ConfigDict(extra="forbid")

    draws: int = Field(default=DEFAULT_DRAWS, ge=1)
    seed: int = DEFAULT_SEED


class StudyPlan(BaseModel):
    """A parsed study plan (see the module docstring for the YAML layout)."""

    model_config = ConfigDict(extra="forbid")

    name: str = "study"
    records: str | None = None
    base: dict[str, Any] = Field(default_factory=dict)
    factors: dict[str, dict[str, dict[str, Any] | None]]
    seeds: list[int] | None = None
    compare: str | None = None
    pairs: list[tuple[str, str]] | None = None
    analysis: AnalysisSettings = Field(default_factory=AnalysisSettings)

    @model_validator(mode="after")
    def _check(self) -> StudyPlan:
        if not self.factors:
            raise ValueError("at least one factor is required")
        for fname, levels in self.factors.items():
            if not levels:
                raise ValueError(f"factor '{fname}' has no levels")
        if self.compare is None:
            self.compare = list(self.factors)[-1]
        if self.compare not in self.factors:
            raise ValueError(f"compare: '{self.compare}' is not a factor "
                             f"({', '.join(self.factors)})")
        levels = self.factors[self.compare]
        if len(levels) < 2:
            raise ValueError(f"compare factor '{self.compare}' needs at least two levels")
        for a, b in self.pairs or []:
            for lv in (a, b):
                if lv not in levels:
                    raise ValueError(f"pairs: '{lv}' is not a level of '{self.compare}'")
            if a == b:
                raise ValueError(f"pairs: '{a}' compared with itself")
        if "run_id" in self.base:
            raise ValueError("base.run_id: a study derives every run id from its configuration")
        if self.seeds is not None and len(set(self.seeds)) != len(self.seeds):
            raise ValueError("seeds: duplicate seed")
        return self


def load_plan(path: str | Path) -> StudyPlan:
    """Read and validate a study plan YAML file."""
    return plan_from_dict(read_yaml_mapping(path, "study plan", StudyPlanError),
                          origin=str(path))


def plan_from_dict(raw: dict[str, Any], origin: str = "<plan>") -> StudyPlan:
    """Validate plain plan data."""
    try:
        return StudyPlan.model_validate(raw)
    except ValidationError as exc:
        loc, message = first_error(exc)
        raise StudyPlanError(f"{origin}: field '{loc}': {message}") from exc


@dataclass(frozen=True)
class StudyCell:
    """One run of the study: its factor levels, seed and resolved configuration."""

    levels: tuple[tuple[str, str], ...]  # (factor, level) in factor order
    seed: int | None
    config: RunConfig

    @property
    def run_id(self) -> str:
        """The run id derived from the configuration hash."""
        return self.config.resolved_run_id()

    def labels(self) -> dict[str, str]:
        """Factor levels and seed as display labels."""
        out = dict(self.levels)
        if self.seed is not None:
            out["seed"] = str(self.seed)
        return out


def expand_plan(plan: StudyPlan, origin: str = "<plan>") -> list[StudyCell]:
    """Every (levels..., seed) combination as a resolved run configuration."""
    factor_names = list(plan.factors)
    seeds: list[int | None] = list(plan.seeds) if plan.seeds is not None else [None]
    cells: dict[str, StudyCell] = {}  # by run id, in plan order
    base = dict(plan.base)
    if plan.records is not None:
        base["records"] = plan.records
    for combo in itertools.product(*(list(plan.factors[f]) for f in factor_names)):
        for seed in seeds:
            overrides: dict[str, Any] = {}
            for fname, level in zip(factor_names, combo, strict=True):
                overrides.update(plan.factors[fname][level] or {})
            if seed is not None:
                overrides[SEED_KEY] = seed
            where = ", ".join(f"{f}={lv}" for f, lv in zip(factor_names, combo, strict=True))
            try:
                config = config_from_dict(base, overrides, origin=f"{origin} ({where})")
            except ConfigError as exc:
                raise StudyPlanError(str(exc)) from exc
            cell = StudyCell(tuple(zip(factor_names, combo, strict=True)), seed, config)
            if cell.run_id in cells:
                raise StudyPlanError(
                    f"{origin}: cells {cells[cell.run_id].labels()} and {cell.labels()} resolve "
                    "to the same configuration; make the factor levels differ")
            cells[cell.run_id] = cell
    return list(cells.values())


@dataclass(frozen=True)
class ContrastSpec:
    """One contrast of the family: two cells that differ only in the compare factor."""

    before: StudyCell
    after: StudyCell
    compare: str

    @property
    def name(self) -> str:
        """e.g. 'model=qwen-9b seed=0: direct -> schema' (from :meth:`labels`)."""
        *fixed, (_, before), (_, after) = self.labels().items()
        prefix = " ".join(f"{k}={v}" for k, v in fixed)
        return (f"{prefix}: " if prefix else "") + f"{before} -> {after}"

    def labels(self) -> dict[str, str]:
        """Fixed factor levels, then the two compared levels."""
        out = {k: v for k, v in self.before.labels().items() if k != self.compare}
        out[f"{self.compare}_before"] = dict(self.before.levels)[self.compare]
        out[f"{self.compare}_after"] = dict(self.after.levels)[self.compare]
        return out


def contrast_family(plan: StudyPlan, cells: Sequence[StudyCell]) -> list[ContrastSpec]:
    """All pairwise contrasts of the compare factor within each fixed other-levels-and-seed."""
    assert plan.compare is not None
    order = list(plan.factors[plan.compare])
    pairs = plan.pairs or [(order[i], order[j]) for i, j in
                           itertools.combinations(range(len(order)), 2)]
    groups: dict[tuple[Any, ...], dict[str, StudyCell]] = {}
    for cell in cells:
        key = (tuple((f, lv) for f, lv in cell.levels if f != plan.compare), cell.seed)
        groups.setdefault(key, {})[dict(cell.levels)[plan.compare]] = cell
    return [ContrastSpec(group[a], group[b], plan.compare)
            for group in groups.values() for a, b in pairs]


@dataclass
class StudyResult:
    """Run ids of every cell and the Holm-adjusted contrast family."""

    plan: StudyPlan
    cells: list[StudyCell]
    contrasts: list[Contrast] = field(default_factory=list)

    def runs_table(self) -> list[dict[str, Any]]:
        """One row per cell: labels and run id."""
        return [{**c.labels(), "run_id": c.run_id, "records": c.config.records}
                for c in self.cells]

    def summary(self) -> list[dict[str, Any]]:
        """One flat row per contrast."""
        return [c.summary() for c in self.contrasts]


def analyze_family(plan: StudyPlan, cells: Sequence[StudyCell],
                   records: Mapping[str, Sequence[CaseRecord]]) -> list[Contrast]:
    """Compute every contrast of the family from records keyed by run id; Holm over the family.

    Every contrast uses the plan's bootstrap seed and draw count (recorded in each result).
    """
    specs = contrast_family(plan, cells)
    for cell in (c for spec in specs for c in (spec.before, spec.after)):
        if cell.run_id not in records:
            raise StudyPlanError(f"no records for run '{cell.run_id}' ({cell.labels()})")
    return adjust_family([
        compare_runs(records[s.before.run_id], records[s.after.run_id],
                     before_run=s.before.run_id, after_run=s.after.run_id, name=s.name,
                     draws=plan.analysis.draws, seed=plan.analysis.seed, labels=s.labels())
        for s in specs])

Executor = Callable[[RunConfig], str]


def run_study(plan: StudyPlan, *, execute: bool = True, progress: bool = True,
              executor: Executor | None = None, origin: str = "<plan>",
              on_cell: Callable[[StudyCell, str], None] | None = None) -> StudyResult:
    """Execute (or resume) every run of the plan, then analyze the contrast family.

    With ``execute=False`` the runs are only read (each must already exist in its records file).
    """
    from authpairs.analysis.runref import RunRef, load_records

    cells = expand_plan(plan, origin=origin)
    records: dict[str, list[CaseRecord]] = {}
    for cell in cells:
        run_id = got = cell.run_id
        if executor is not None:
            got = executor(cell.config)
        elif execute:
            from authpairs.runs.api import run_async  # the run API, loaded only to run

            got = asyncio.run(run_async(cell.config, progress=progress)).run_id
        if got != run_id:
            raise StudyPlanError(f"executor returned run id '{got}' for cell "
                                 f"{cell.labels()}, expected '{run_id}'")
        if on_cell is not None:
            on_cell(cell, run_id)
        records[run_id] = load_records(RunRef(Path(cell.config.records), run_id))
    return StudyResult(plan, cells, analyze_family(plan, cells, records))
