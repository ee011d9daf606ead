"""Build the HTML report of recorded runs: sections, tables (CSV), figures (SVG + PNG), page.

Reads records only (no model, no dataset). Entry point: :func:`build_report`; the sections
live in :mod:`authpairs.report.per_run` and :mod:`authpairs.report.paired`. The page is rendered
with jinja2 (autoescaped, no network resources); its tables are drawn by the one HTML renderer
of table views (:func:`authpairs.analysis.notebook.html_tables`).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import jinja2

from authpairs.analysis.notebook import html_tables
from authpairs.analysis.study import (
    StudyCell,
    StudyPlan,
    expand_plan,
    load_plan,
    plan_from_dict,
)
from authpairs.report import figures as fig
from authpairs.report.cases import case_section
from authpairs.report.files import write_json
from authpairs.report.paired import (
    agent_pair,
    compared,
    composition_section,
    contrasts_section,
    guardrail_runs,
    study_address,
    transitions_section,
)
from authpairs.report.per_run import (
    agent_section,
    breakdown_section,
    engine_section,
    groups_section,
    overview,
    runs_section,
    seeds_section,
)
from authpairs.report.request import ReportRequest
from authpairs.report.runset import (
    ReportInputError,
    RunIndex,
    load_report_runs,
)
from authpairs.report.sections import Section

__all__ = ["ReportResult", "build_report"]

_ENV = jinja2.Environment(loader=jinja2.PackageLoader("authpairs.report", "templates"),
                          autoescape=jinja2.select_autoescape(["html", "j2"]),
                          undefined=jinja2.StrictUndefined, trim_blocks=True,
                          lstrip_blocks=True)
# a section's table as HTML (every text escaped by the renderer: the template marks it safe)
_ENV.filters["table_html"] = lambda view: html_tables([view], limit=len(view.rows))


def render_page(sections: Sequence[Section], *, runs: Sequence[str],
                incomplete: Sequence[str], unverified: Sequence[str] = ()) -> str:
    """The complete HTML page; figures and CSV files are referenced relatively. ``unverified``
    describes each run used although its records fail the integrity check (a banner)."""
    empty = [s.key for s in sections if s.empty]
    if empty:
        raise ValueError(f"report sections without content: {empty}")
    return _ENV.get_template("report.html.j2").render(
        sections=sections, runs=runs, incomplete=incomplete, unverified=unverified,
        generated=datetime.now(UTC).isoformat(timespec="seconds"))


@dataclass
class ReportResult:
    """What was written: the page, the sections, the incomplete runs and the timing."""

    html: Path
    sections: list[Section]
    omitted: dict[str, str]
    incomplete: list[str]
    runs: list[str]
    seconds: float


def _load_study(path: Path) -> tuple[StudyPlan, str]:
    """A plan YAML, or a ``study --out`` folder holding ``study.json``."""
    if path.is_dir():
        data_path = path / "study.json"
        if not data_path.is_file():
            raise ReportInputError(f"{path}: no study.json (expected a `authpairs study --out` "
                                   "folder or a plan YAML file)")
        data = json.loads(data_path.read_text(encoding="utf-8"))
        return plan_from_dict(data.get("plan", {}), origin=str(data_path)), str(data_path)
    return load_plan(path), str(path)


def study_columns(cells: list[StudyCell]) -> dict[str, str]:
    """Run id -> the study cell's factor levels (``model=a seed=0``), naming only the factors
    (and the seed) that take more than one level in the study; {} when none does."""
    varying = [k for k in dict.fromkeys(k for c in cells for k in c.labels())
               if len({c.labels().get(k) for c in cells}) > 1]
    if not varying:
        return {}
    out = {c.run_id: " ".join(f"{k}={c.labels()[k]}" for k in varying if k in c.labels())
           for c in cells}
    if len(set(out.values())) < len(out):  # equal levels (a repeated cell): keep ids apart
        out = {run_id: f"{label} ({run_id})" for run_id, label in out.items()}
    return out


def build_report(req: ReportRequest) -> ReportResult:
    """Read the runs, compute every section the runs allow, write the page and its files."""
    t0 = time.perf_counter()
    plan: StudyPlan | None = None
    cells: list[StudyCell] = []
    if req.study is not None:
        plan, origin = _load_study(req.study)
        cells = expand_plan(plan, origin=origin)
    labels = {cell.run_id: " ".join(f"{k}={v}" for k, v in cell.labels().items() if k != "seed")
              for cell in cells}
    columns = study_columns(cells)
    if req.compose and len(req.compose) < 2:
        raise ReportInputError("--compose needs at least two reviewer runs")
    addresses = [*req.runs, *(study_address(c) for c in cells), *(req.compare or ()),
                 *req.compose]
    if not addresses:
        raise ReportInputError("no runs given")
    loaded = RunIndex(load_report_runs(addresses, req.records), req.records)
    given = [loaded.get(a) for a in dict.fromkeys(req.runs)] or loaded.runs
    runs = loaded.runs
    req.out.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(fig.FigureQueue(req.out, req.workers)) as figs:
        sections: list[Section] = []
        omitted: dict[str, str] = {}
        guardrails = guardrail_runs(runs)  # agent runs: the agent section (stack outcomes)
        pair = ((loaded.get(req.compare[0]), loaded.get(req.compare[1]))
                if req.compare is not None else None)
        agent_pair(pair)  # refuses an agent run against a guardrail run
        builders: tuple[tuple[str, Callable[[], Section | str]], ...] = (
            ("runs", lambda: runs_section(req.out, guardrails)),
            ("seed summaries", lambda: seeds_section(req.out, figs, guardrails, labels, req)),
            ("breakdowns", lambda: breakdown_section(req.out, figs, guardrails, columns)),
            ("engine x label", lambda: engine_section(req.out, figs, guardrails, columns)),
            ("group-level correctness", lambda: groups_section(req.out, guardrails)),
            ("contrast matrix", lambda: contrasts_section(req.out, figs, loaded, plan, cells,
                                                           guardrail_runs(given), req)
             if len(guardrail_runs(given)) >= 2 or plan is not None
             else "agent runs are compared as stacks, case by case (--compare A B)"),
        )
        for name, build in builders:
            got = build()
            if isinstance(got, Section):
                sections.append(got)
            else:
                omitted[name] = got
        agent = agent_section(req.out, runs)  # None without an agent run
        if agent is not None:
            sections.append(agent)
        if pair is not None:
            sections.append(transitions_section(req.out, figs, compared(*pair, req)))
        else:
            omitted["request transitions"] = "give --compare A B"
        if req.compose:
            members = [loaded.get(a) for a in req.compose]
            sections.append(composition_section(req.out, figs, members, req))
        else:
            omitted["compositions"] = "give --compose R1 R2 [R3 ...]"
        sections.append(case_section(runs, pair))
        sections.insert(0, overview(runs, omitted))
        figs.render()
    html = req.out / "report.html"
    bad = [r.name for r in runs if not r.complete]
    unverified = [r.unverified.describe() for r in runs if r.unverified is not None]
    html.write_text(render_page(sections, runs=[r.name for r in runs], incomplete=bad,
                                unverified=unverified), encoding="utf-8")
    write_json(req.out / "report.json", {
        "runs": [r.name for r in runs], "incomplete": bad,
        "unverified_runs": [r.name for r in runs if r.unverified is not None],
        "sections": [s.key for s in sections], "omitted": omitted,
        "figures": [f.stem for s in sections for f in s.figures],
        "tables": sorted(str(p.relative_to(req.out)) for p in (req.out / "tables").glob("*.csv")),
    })
    return ReportResult(html, sections, omitted, bad, [r.name for r in runs],
                        time.perf_counter() - t0)
