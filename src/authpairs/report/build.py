"""Build the HTML report of recorded runs: sections, tables (CSV), figures (SVG + PNG), page.

Reads records only (no model, no dataset). Entry point: :func:`build_report`.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from authpairs.analysis.compare import ComparisonError, compare_records
from authpairs.analysis.compose import (
    CompositionError,
    compose_all,
    ordered_selections,
    route_order,
    unavailable_by_label,
)
from authpairs.analysis.contrast import Contrast, adjust_family, compare_runs, make_contrast
from authpairs.analysis.cost import (
    GridSpec,
    break_even_table,
    condition_from_composition,
    cost_grid,
)
from authpairs.analysis.runref import DEFAULT_RECORDS, RunRef, parse_run_ref
from authpairs.analysis.stats import DEFAULT_DRAWS, DEFAULT_SEED
from authpairs.analysis.study import (
    StudyCell,
    StudyPlan,
    analyze_family,
    expand_plan,
    load_plan,
    plan_from_dict,
)
from authpairs.report import figures as fig
from authpairs.report import measures
from authpairs.report.html import render_page
from authpairs.report.runset import (
    ReportInputError,
    ReportRun,
    incomplete,
    load_report_runs,
    same_dataset,
)
from authpairs.report.sections import Section, table

#: Without a study plan, every pair of up to this many same-dataset runs forms the family.
MAX_PAIRWISE_RUNS = 8
ATTRIBUTES = ("family", "domain", "scenario")


@dataclass
class ReportRequest:
    """What to report: runs, an optional study plan, a comparison and a composition."""

    runs: list[str]
    out: Path
    records: Path = DEFAULT_RECORDS
    study: Path | None = None
    compare: tuple[str, str] | None = None
    compose: list[str] = field(default_factory=list)
    draws: int = DEFAULT_DRAWS
    seed: int = DEFAULT_SEED
    grid: GridSpec | None = None
    workers: int | None = None  # figure-drawing processes; None = one per core (at most 4)


@dataclass
class ReportResult:
    """What was written: the page, the sections, the incomplete runs and the timing."""

    html: Path
    sections: list[Section]
    omitted: dict[str, str]
    incomplete: list[str]
    runs: list[str]
    seconds: float

    def files(self) -> list[Path]:
        """Every file under the report folder."""
        return sorted(p for p in self.html.parent.rglob("*") if p.is_file())


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


def _study_address(cell: StudyCell) -> str:
    return f"{cell.config.records}::{cell.run_id}"


class _Runs:
    """The loaded runs, addressable by the argument that named them."""

    def __init__(self, runs: Sequence[ReportRun], default: Path) -> None:
        self.runs = list(runs)
        self.default = default
        self._by_ref = {(r.ref.path, r.ref.run_id): r for r in runs}

    def get(self, address: str) -> ReportRun:
        ref: RunRef = parse_run_ref(address, self.default)
        return self._by_ref[(ref.path, ref.run_id)]


def _runs_section(out: Path, runs: Sequence[ReportRun]) -> Section:
    section = Section("runs", "Runs", intro=(
        "One row per run: every outcome measure (all cases stay in every denominator), "
        "unavailable responses by reason, tokens, and the run's identity (configuration and "
        "dataset-manifest hashes, versions). Shape of the paper's Tables 1, 4, 5 and 6."))
    section.tables.append(table(out, "runs", "runs and outcome measures",
                                measures.run_rows(runs)))
    return section


def _seeds_section(out: Path, figs: fig.FigureQueue, runs: Sequence[ReportRun],
                   labels: dict[str, str], req: ReportRequest) -> Section | str:
    groups = measures.seed_groups(runs, labels)
    if not any(len(g.runs) > 1 for g in groups):
        return "no configuration was run with more than one seed"
    multi = [g for g in groups if len(g.runs) > 1]
    rows = measures.seed_summary(multi, draws=req.draws, seed=req.seed)
    section = Section("seeds", "Across seeds", intro=(
        "Configurations run with several seeds: mean, minimum and maximum of each rate over "
        f"seeds, and the scenario-clustered descriptive bootstrap interval (95 %, {req.draws:,} "
        f"draws, seed {req.seed}) of the rate over all seeds' records, resampling whole "
        "clusters. Paper Figure 1. Descriptive of this cohort, not population rates."))
    section.tables.append(table(out, "seed_summary", "rates across seeds (%)", rows, [
        "configuration", "seeds", "rate", "n_per_seed", "mean", "min", "max", "pooled",
        "bootstrap_low", "bootstrap_high", "clusters", "runs"]))
    rates = [(r.name, r.title) for r in measures.RATES]
    section.figures.append(figs.add("seeds", "Rates across seeds", fig.seed_figure, rows, rates))
    return section


def _breakdown_section(out: Path, figs: fig.FigureQueue, runs: Sequence[ReportRun]
                       ) -> Section | str:
    present = [a for a in ATTRIBUTES if measures.has_attribute(runs, a)]
    if not present:
        return "the records carry no family, domain or scenario attribute"
    section = Section("breakdowns", "Usable correctness by family, domain and scenario", intro=(
        "Usable correctness (correct usable decisions over all inputs of the cell; unavailable "
        "responses count as incorrect) per run. Paper Figures 3-5. Hatched cells: the run has "
        "no input with that value."))
    for attribute in present:
        values, cols, pct, n = measures.attribute_matrix(runs, attribute)
        rows = measures.matrix_rows(attribute, values, cols, pct, n)
        wide = [{attribute: v, **{c: (None if np.isnan(pct[i, j]) else round(float(pct[i, j]), 1))
                                  for j, c in enumerate(cols)}} for i, v in enumerate(values)]
        section.downloads.append(table(out, f"correctness_by_{attribute}", "", rows).csv)
        block = table(out, f"correctness_by_{attribute}_wide",
                      f"usable correctness (%) by {attribute}", wide)
        if len(cols) <= 12:
            section.tables.append(block)
        else:
            section.downloads.append(block.csv)
        section.figures.append(figs.add(
            f"correctness_by_{attribute}", f"Usable correctness by {attribute}",
            fig.correctness_heatmap, attribute, values, cols, pct, n))
    return section


def _engine_section(out: Path, figs: fig.FigureQueue, runs: Sequence[ReportRun]) -> Section | str:
    rows = measures.engine_label_rows(runs)
    if not rows:
        return "no native-track records (no engine attribute)"
    section = Section("engines", "Native engine x reference label", intro=(
        "Outcomes per native engine and reference label (permit = lawful, deny = forbidden). "
        "Paper Figure 6. Cells: share of the row's inputs (%), with the count."))
    section.tables.append(table(out, "engine_label", "outcome counts by engine and label", rows))
    names = [f"{r['run']} · {r['engine']} · {r['label']} ({r['n']})" for r in rows]
    counts = np.array([[r[o] for o in measures.OUTCOMES] for r in rows], dtype=np.float64)
    pct = 100.0 * counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    text = [[f"{pct[i, j]:.0f}% ({int(counts[i, j])})" for j in range(len(measures.OUTCOMES))]
            for i in range(len(rows))]
    total = sum(r["n"] for r in rows)
    section.figures.append(figs.add(
        "engine_label", "Engine x reference label", fig.heatmap,
        pct, names, measures.OUTCOMES, title=f"Native outcomes by engine and reference label "
        f"(n = {total} inputs over {len(runs)} runs)", xlabel="outcome",
        ylabel="run · engine · reference label (inputs)", cbar_label="share of row (%)",
        vmin=0, vmax=100, text=text))
    return section


def _groups_section(out: Path, runs: Sequence[ReportRun]) -> Section | str:
    rows = measures.group_rows(runs)
    if not rows:
        return "no native source groups or language scenarios in the records"
    section = Section("groups", "Group-level correctness", intro=(
        "Native track (paper C.3): equal-weight source-group accuracy (mean of per-group usable "
        "correctness), dependent pairs (a lawful and a forbidden input of the same policy and "
        "query) with both members correct, and query groups with both labels whose every "
        "member is correct. Language track: full-quartet correctness, scenarios whose four "
        "contexts (two lawful, two forbidden) are all decided correctly."))
    section.tables.append(table(out, "groups", "group-level correctness", rows))
    return section


def _contrast_rows(contrasts: Sequence[Contrast]) -> list[dict[str, Any]]:
    return [c.summary() for c in contrasts]


def _contrast_figure(figs: fig.FigureQueue, contrasts: Sequence[Contrast],
                     cells: Sequence[tuple[str, str]]) -> fig.FigureFile:
    rows = list(dict.fromkeys(r for r, _ in cells))
    cols = list(dict.fromkeys(c for _, c in cells))
    values = np.full((len(rows), len(cols)), np.nan)
    text = [["" for _ in cols] for _ in rows]
    for contrast, (r, c) in zip(contrasts, cells, strict=True):
        i, j = rows.index(r), cols.index(c)
        values[i, j] = contrast.stats.net_pp
        p = contrast.holm_sign_flip_p
        star = "*" if p is not None and p < 0.05 else ""
        text[i][j] = f"{contrast.stats.net_pp:+.1f}{star}\np={p:.3f}" if p is not None else ""
    span = max(5.0, float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 5.0)
    lawful = max((c.stats.lawful for c in contrasts), default=0)
    return figs.add(
        "contrasts", "Contrast matrix", fig.heatmap,
        values, rows, cols, title=f"Contrast family: net lawful change with Holm-adjusted "
        f"sign-flip p ({len(contrasts)} contrasts, n = {lawful} matched lawful requests each)",
        xlabel="after (or compared levels)", ylabel="before (or fixed levels)",
        cbar_label="net lawful change (percentage points; dark = lost)", vmin=-span, vmax=span,
        text=text, cmap="gray", reverse_text=True)


def _contrasts_section(out: Path, figs: fig.FigureQueue, runs: _Runs, plan: StudyPlan | None,
                       cells: list[StudyCell], given: Sequence[ReportRun],
                       req: ReportRequest) -> Section | str:
    if plan is not None:
        records = {c.run_id: runs.get(_study_address(c)).records for c in cells}
        contrasts = analyze_family(plan, cells, records)
        where: list[tuple[str, str]] = []
        for c in contrasts:
            fixed = {k: v for k, v in c.labels.items()
                     if not k.endswith(("_before", "_after"))}
            where.append((" ".join(f"{k}={v}" for k, v in fixed.items()) or "all",
                          f"{c.labels[f'{plan.compare}_before']} -> "
                          f"{c.labels[f'{plan.compare}_after']}"))
        intro = (f"The study plan's declared family ({len(contrasts)} contrasts of factor "
                 f"'{plan.compare}'), Holm-adjusted together.")
    else:
        if len(given) < 2:
            return "fewer than two runs (give --study for a declared family)"
        if len(given) > MAX_PAIRWISE_RUNS:
            return (f"more than {MAX_PAIRWISE_RUNS} runs without a study plan: give --study to "
                    "declare the contrast family")
        for other in given[1:]:
            try:
                same_dataset(given[0], other, "contrast family")
            except ReportInputError as exc:
                return f"runs on different datasets ({exc})"
        contrasts, where = [], []
        for a, b in itertools.combinations(given, 2):
            comparison = compare_records(a.records, b.records, before_run=a.name,
                                         after_run=b.name)
            contrasts.append(make_contrast(comparison, draws=req.draws, seed=req.seed))
            where.append((a.name, b.name))
        adjust_family(contrasts)
        intro = (f"Every pair of the {len(given)} runs in the order given (earlier = before), "
                 f"{len(contrasts)} contrasts Holm-adjusted together.")
    section = Section("contrasts", "Contrast matrix", intro=intro + (
        " Cells: net lawful change (gained - lost, percentage points of matched lawful "
        "requests) and the Holm-adjusted cluster sign-flip p (* below 0.05); hatched cells "
        "are not in the family. Gains and losses "
        f"are never netted per request; see the CSV for both. Bootstrap: {req.draws:,} draws, "
        f"seed {req.seed}. Paper Figure 7."))
    section.tables.append(table(out, "contrasts", "contrasts", _contrast_rows(contrasts), [
        "contrast", "retained", "lost", "gained", "net", "lawful_matched", "newly_approved",
        "newly_blocked", "net_pp", "bootstrap_low", "bootstrap_high", "mcnemar_p",
        "sign_flip_p", "holm_sign_flip_p", "holm_mcnemar_p"]))
    section.figures.append(_contrast_figure(figs, contrasts, where))
    return section


def _transitions_section(out: Path, figs: fig.FigureQueue, a: ReportRun, b: ReportRun,
                         req: ReportRequest) -> Section:
    same_dataset(a, b, "--compare")
    try:
        contrast = compare_runs(a.records, b.records, before_run=a.name, after_run=b.name,
                                draws=req.draws, seed=req.seed)
    except ComparisonError as exc:
        raise ReportInputError(f"--compare {a.name} {b.name}: {exc}") from exc
    comp = contrast.comparison
    n = comp.counts()
    section = Section("transitions", f"Request transitions: {a.name} -> {b.name}", intro=(
        "Every request matched by id. Lawful requests are retained, lost, gained or neither "
        "(completed = approved, and executed and verified where effects were enforced); "
        "forbidden requests still approved, newly approved, newly blocked or still blocked."))
    s = contrast.stats
    section.notes.append(
        f"lost {s.lost}, gained {s.gained}, net {s.net:+d} of {s.lawful} lawful "
        f"({s.net_pp:+.2f} pp); exact McNemar p = {s.mcnemar_p:.4f}; cluster bootstrap 95% "
        f"{s.bootstrap.low:+.2f} to {s.bootstrap.high:+.2f} pp ({s.bootstrap.clusters} "
        f"clusters); cluster sign-flip p = {s.sign_flip.p_value:.4f} ({s.sign_flip.method}).")
    if comp.only_before or comp.only_after or comp.label_mismatch:
        section.notes.append(f"unmatched: {len(comp.only_before)} only in {a.name}, "
                             f"{len(comp.only_after)} only in {b.name}, "
                             f"{len(comp.label_mismatch)} with differing labels.")
    lawful_keys = ("retained", "lost", "gained", "neither")
    forbidden_keys = ("still_approved", "newly_approved", "newly_blocked", "still_blocked")
    section.tables.append(table(out, "transitions", "transition counts", [
        {"side": "lawful", **{k: n[k] for k in lawful_keys}, "matched": n["lawful_matched"]},
        {"side": "forbidden", **{k: n[k] for k in forbidden_keys},
         "matched": n["forbidden_matched"]}]))
    lost = [c.to_dict() for c in comp.with_transition("lost")]
    cols = ["case_id", "cluster", "path", "before_status", "after_status", "resolved"]
    if lost:
        section.tables.append(table(out, "lost_requests",
                                    f"lost lawful requests ({len(lost)}): ids and "
                                    "authorization paths", lost, cols, max_rows=500))
    else:
        section.notes.append("No lawful request was lost.")
    changed = [c.to_dict() for c in (*comp.lawful, *comp.forbidden)
               if c.transition not in ("retained", "neither", "still_approved",
                                       "still_blocked")]
    section.tables.append(table(out, "changed_requests",
                                f"every changed request ({len(changed)})",
                                changed, ["transition", *cols, "label"]))
    section.downloads.append(table(out, "requests", "", comp.rows()).csv)
    total = n["lawful_matched"] + n["forbidden_matched"]
    section.figures.append(figs.add(
        "transitions", "Request transitions", fig.grouped_bars, ["lawful", "forbidden"],
        [(f"{x} / {y}", [n[x], n[y]]) for x, y in zip(lawful_keys, forbidden_keys, strict=True)],
        title=f"Request transitions {a.name} -> {b.name} (n = {total} matched requests)",
        xlabel="requests (count)", ylabel="reference label", horizontal=True))
    return section


def _composition_section(out: Path, figs: fig.FigureQueue, members: Sequence[ReportRun],
                         req: ReportRequest) -> Section:
    for other in members[1:]:
        same_dataset(members[0], other, "--compose")
    try:
        matrix, results = compose_all({r.name: r.records for r in members})
    except CompositionError as exc:
        raise ReportInputError(f"--compose: {exc}") from exc
    orders = ordered_selections(len(matrix.names))
    rows: list[dict[str, Any]] = []
    routed: list[dict[str, Any]] = []
    for number, (order, result) in enumerate(zip(orders, results, strict=True), start=1):
        split = unavailable_by_label(matrix, order)
        rows.append({"#": number, "order": result.name,
                     "incorrect_approvals": result.incorrect_approvals,
                     "lawful_approvals": result.lawful_approvals,
                     "unavailable_forbidden": split["forbidden"],
                     "unavailable_lawful": split["lawful"], "abstentions": result.abstentions,
                     "consultations": result.consultations,
                     "additional_consultations": result.additional_consultations,
                     "input_tokens": result.input_tokens, "output_tokens": result.output_tokens,
                     "reasoning_tokens": result.reasoning_tokens})
        routed.extend(route_order(matrix, order))
    first = results[0]
    section = Section("compositions", "All-must-allow compositions", intro=(
        f"Every ordered selection of {', '.join(matrix.names)} replayed from recorded decisions "
        f"on {len(matrix.case_ids)} shared inputs ({first.n_forbidden} forbidden, "
        f"{first.n_lawful} lawful): a later reviewer is consulted only after a usable ALLOW "
        "from every earlier one. Unavailable responses reached are split by reference label "
        "(paper Figure 2). Selected tokens count every consulted record."))
    if matrix.unmatched:
        section.notes.append(f"{len(matrix.unmatched)} input(s) not present in every run were "
                             "left out: " + ", ".join(matrix.unmatched[:20]))
    section.tables.append(table(out, "compositions", "compositions per order", rows))
    vetoes = [r for r in routed if r["label"] == "lawful" and r["stopped_by"]]
    section.downloads.append(table(out, "routed", "", routed).csv)
    section.tables.append(table(out, "lawful_vetoes", f"who stopped which lawful request "
                                f"({len(vetoes)} order x request rows; every routed request "
                                "in routed.csv)", vetoes,
                                ["order", "case_id", "stopped_by", "stop_reason", "consulted"]))
    section.figures.append(figs.add(
        "compositions", "Compositions", fig.grouped_bars,
        [f"{r['#']}: {r['order']}" for r in rows],
        [("incorrect approvals", [r["incorrect_approvals"] for r in rows]),
         ("lawful approvals", [r["lawful_approvals"] for r in rows]),
         ("unavailable reached, forbidden", [r["unavailable_forbidden"] for r in rows]),
         ("unavailable reached, lawful", [r["unavailable_lawful"] for r in rows])],
        title=f"Compositions ({len(rows)} orders; n = {first.n_forbidden} forbidden + "
              f"{first.n_lawful} lawful inputs)",
        xlabel="ordered composition", ylabel="requests (count)"))
    conditions = [condition_from_composition(r) for r in results]
    section.downloads.append(table(out, "break_even", "", break_even_table(conditions)).csv)
    spec = req.grid or GridSpec()
    grid = cost_grid(conditions, spec)
    status = grid.status_counts()
    section.downloads.append(table(out, "cost_grid", "", grid.rows).csv)
    wins = [{"#": rows[i]["#"], "order": r.name, "cells_selected": grid.win_counts().get(r.name, 0)}
            for i, r in enumerate(results)]
    section.tables.append(table(out, "cost_grid_wins",
                                f"cost grid ({len(grid.rows)} cells: {status['unique']} unique, "
                                f"{status['tie']} tied, {status['infeasible']} infeasible): "
                                "cells where each order has least count loss", wins))
    section.figures.append(figs.add(
        "cost_grid", "Cost grid", fig.grid_figure, grid.rows,
        {r.name: i for i, r in enumerate(results, start=1)},
        title=f"Least-loss composition per cost-grid cell (n = {len(grid.rows)} cells, "
              f"{status['infeasible']} infeasible; {first.n_forbidden} forbidden + "
              f"{first.n_lawful} lawful inputs)"))
    return section


def _overview(runs: Sequence[ReportRun], omitted: dict[str, str]) -> Section:
    section = Section("overview", "Overview")
    datasets = sorted({r.dataset for r in runs})
    section.notes.append(f"{len(runs)} run(s) on {', '.join(datasets)}; "
                         f"{sum(len(r.records) for r in runs):,} case records.")
    bad = incomplete(runs)
    if bad:
        for r in bad:
            section.notes.append(f"INCOMPLETE: run '{r.name}' has {len(r.records)} of "
                                 f"{r.expected} case records ({r.missing} missing); its "
                                 "measures cover the recorded cases only.")
    else:
        section.notes.append("Every run is complete (a record for every selected case).")
    for key, reason in omitted.items():
        section.notes.append(f"Not shown: {key} ({reason}).")
    return section


def build_report(req: ReportRequest) -> ReportResult:
    """Read the runs, compute every section the runs allow, write the page and its files."""
    t0 = time.perf_counter()
    plan: StudyPlan | None = None
    cells: list[StudyCell] = []
    labels: dict[str, str] = {}
    if req.study is not None:
        plan, origin = _load_study(req.study)
        cells = expand_plan(plan, origin=origin)
        for cell in cells:
            labels[cell.run_id] = " ".join(f"{k}={v}" for k, v in cell.labels().items()
                                           if k != "seed")
    if req.compose and len(req.compose) < 2:
        raise ReportInputError("--compose needs at least two reviewer runs")
    addresses = [*req.runs, *(_study_address(c) for c in cells), *(req.compare or ()),
                 *req.compose]
    if not addresses:
        raise ReportInputError("no runs given")
    loaded = _Runs(load_report_runs(addresses, req.records), req.records)
    given = [loaded.get(a) for a in dict.fromkeys(req.runs)] or loaded.runs
    runs = loaded.runs
    req.out.mkdir(parents=True, exist_ok=True)
    figs = fig.FigureQueue(req.out, req.workers)
    try:
        return _build(req, loaded, runs, given, plan, cells, labels, figs, t0)
    finally:
        figs.close()


def _build(req: ReportRequest, loaded: _Runs, runs: list[ReportRun], given: list[ReportRun],
           plan: StudyPlan | None, cells: list[StudyCell], labels: dict[str, str],
           figs: fig.FigureQueue, t0: float) -> ReportResult:
    sections: list[Section] = [_runs_section(req.out, runs)]
    omitted: dict[str, str] = {}
    builders: tuple[tuple[str, Callable[[], Section | str]], ...] = (
        ("seed summaries", lambda: _seeds_section(req.out, figs, runs, labels, req)),
        ("breakdowns", lambda: _breakdown_section(req.out, figs, runs)),
        ("engine x label", lambda: _engine_section(req.out, figs, runs)),
        ("group-level correctness", lambda: _groups_section(req.out, runs)),
        ("contrast matrix", lambda: _contrasts_section(req.out, figs, loaded, plan, cells,
                                                       given, req)),
    )
    for name, build in builders:
        got = build()
        if isinstance(got, Section):
            sections.append(got)
        else:
            omitted[name] = got
    if req.compare is not None:
        sections.append(_transitions_section(req.out, figs, loaded.get(req.compare[0]),
                                             loaded.get(req.compare[1]), req))
    else:
        omitted["request transitions"] = "give --compare A B"
    if req.compose:
        members = [loaded.get(a) for a in req.compose]
        sections.append(_composition_section(req.out, figs, members, req))
    else:
        omitted["compositions"] = "give --compose R1 R2 [R3 ...]"
    sections.insert(0, _overview(runs, omitted))
    figs.render()
    html = req.out / "report.html"
    bad = [r.name for r in incomplete(runs)]
    html.write_text(render_page(sections, runs=[r.name for r in runs], incomplete=bad),
                    encoding="utf-8")
    (req.out / "report.json").write_text(json.dumps({
        "runs": [r.name for r in runs], "incomplete": bad,
        "sections": [s.key for s in sections], "omitted": omitted,
        "figures": [f.stem for s in sections for f in s.figures],
        "tables": sorted(str(p.relative_to(req.out)) for p in (req.out / "tables").glob("*.csv")),
    }, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return ReportResult(html, sections, omitted, bad, [r.name for r in runs],
                        time.perf_counter() - t0)
