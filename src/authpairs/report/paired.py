"""Report sections that compare runs: the contrast matrix, request transitions and
all-must-allow compositions with the cost grid."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from authpairs.analysis.agent_runs import compare_stacks
from authpairs.analysis.compare import ComparisonError
from authpairs.analysis.compose import (
    CompositionError,
    compose_all,
    ordered_selections,
    route_order,
)
from authpairs.analysis.contrast import Contrast, adjust_family, compare_runs
from authpairs.analysis.cost import (
    GridSpec,
    break_even_table,
    condition_from_composition,
    cost_grid,
)
from authpairs.analysis.formatting import format_p
from authpairs.analysis.runref import agent_runs
from authpairs.analysis.study import (
    StudyCell,
    StudyPlan,
    analyze_family,
)
from authpairs.report import figures as fig
from authpairs.report.request import ReportRequest
from authpairs.report.runset import (
    ReportInputError,
    ReportRun,
    RunIndex,
    same_dataset,
)
from authpairs.report.sections import Section, download, table

#: Without a study plan, every pair of up to this many same-dataset runs forms the family.
MAX_PAIRWISE_RUNS = 8


def study_address(cell: StudyCell) -> str:
    """The ``PATH::RUN_ID`` address of a study cell's run."""
    return f"{cell.config.records}::{cell.run_id}"


def guardrail_runs(runs: Sequence[ReportRun]) -> list[ReportRun]:
    """The runs that are not agent runs (the contrast family is made of these: two agent runs
    are compared as stacks, case by case)."""
    return [run for run in runs if not run.info.is_agent_run]


def agent_pair(compare: tuple[ReportRun, ReportRun] | None) -> bool:
    """Whether ``--compare`` names two agent runs; an agent run against a guardrail run is an
    :class:`~authpairs.analysis.runref.AgentRunError`."""
    return compare is not None and agent_runs({r.name: r.info.is_agent_run for r in compare},
                                              "--compare takes two agent runs (stacks) or "
                                              "two guardrail runs")


def contrast_figure(figs: fig.FigureQueue, contrasts: Sequence[Contrast],
                     cells: Sequence[tuple[str, str]]) -> fig.FigureFile:
    """Queue the contrast-matrix heatmap (net change with Holm-adjusted p)."""
    rows = list(dict.fromkeys(r for r, _ in cells))
    cols = list(dict.fromkeys(c for _, c in cells))
    values = np.full((len(rows), len(cols)), np.nan)
    text = [["" for _ in cols] for _ in rows]
    for contrast, (r, c) in zip(contrasts, cells, strict=True):
        i, j = rows.index(r), cols.index(c)
        values[i, j] = contrast.stats.net_pp
        p = contrast.holm_sign_flip_p
        star = "*" if p is not None and p < 0.05 else ""
        text[i][j] = (f"{contrast.stats.net_pp:+.1f}{star}\np={format_p(p)}" if p is not None
                      else "")
    span = max(5.0, float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 5.0)
    lawful = max((c.stats.lawful for c in contrasts), default=0)
    return figs.add(
        "contrasts", "Contrast matrix", fig.heatmap,
        values, rows, cols, title=f"Contrast family: net lawful change with Holm-adjusted "
        f"sign-flip p ({len(contrasts)} contrast{'' if len(contrasts) == 1 else 's'}, "
        f"n = {lawful} matched lawful requests each)",
        xlabel="after (or compared levels)", ylabel="before (or fixed levels)",
        cbar_label="net lawful change (percentage points; dark = lost)", vmin=-span, vmax=span,
        text=text, cmap="gray", reverse_text=True)


def contrasts_section(out: Path, figs: fig.FigureQueue, runs: RunIndex, plan: StudyPlan | None,
                       cells: list[StudyCell], given: Sequence[ReportRun],
                       req: ReportRequest) -> Section | str:
    """The plan's contrast family, or every pair of a few same-dataset runs."""
    if plan is not None:
        records = {c.run_id: runs.get(study_address(c)).records for c in cells}
        contrasts = analyze_family(plan, cells, records)
        where = [(" ".join(f"{k}={v}" for k, v in c.labels.items()
                           if not k.endswith(("_before", "_after"))) or "all",
                  f"{c.labels[f'{plan.compare}_before']} -> {c.labels[f'{plan.compare}_after']}")
                 for c in contrasts]
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
        pairs = list(itertools.combinations(given, 2))
        contrasts = adjust_family([compare_runs(a.records, b.records, before_run=a.name,
                                                after_run=b.name, draws=req.draws, seed=req.seed)
                                   for a, b in pairs])
        where = [(a.name, b.name) for a, b in pairs]
        intro = (f"Every pair of the {len(given)} runs in the order given (earlier = before), "
                 f"{len(contrasts)} contrasts Holm-adjusted together.")
    section = Section("contrasts", "Contrast matrix", intro=intro + (
        " Cells: net lawful change (gained - lost, percentage points of matched lawful "
        "requests) and the Holm-adjusted cluster sign-flip p (* below 0.05); hatched cells "
        "are not in the family. Gains and losses "
        f"are never netted per request; see the CSV for both. Bootstrap: {req.draws:,} draws, "
        f"seed {req.seed}. Paper Figure 7."))
    section.tables.append(table(out, "contrasts", "contrasts", [c.summary() for c in contrasts], [
        "contrast", "retained", "lost", "lost_denied", "lost_unavailable", "gained", "net",
        "lawful_matched", "newly_approved", "newly_blocked", "newly_unavailable", "net_pp",
        "bootstrap_low", "bootstrap_high", "mcnemar_p", "sign_flip_p", "holm_sign_flip_p",
        "holm_mcnemar_p"]))
    section.figures.append(contrast_figure(figs, contrasts, where))
    return section


def compared(a: ReportRun, b: ReportRun, req: ReportRequest) -> Contrast:
    """The contrast of ``--compare A B``: two guardrail runs on the same dataset, request by
    request, or two agent runs, case by case (:func:`compare_stacks`)."""
    same_dataset(a, b, "--compare")
    if a.agent_score is not None and b.agent_score is not None:
        return compare_stacks(a.agent_score, b.agent_score, draws=req.draws, seed=req.seed)
    try:
        return compare_runs(a.records, b.records, before_run=a.name, after_run=b.name,
                            draws=req.draws, seed=req.seed)
    except ComparisonError as exc:
        raise ReportInputError(f"--compare {a.name} {b.name}: {exc}") from exc


def transitions_section(out: Path, figs: fig.FigureQueue, contrast: Contrast) -> Section:
    """The transitions of the ``--compare`` pair, every lost and changed request or case, the
    outcome matrices and the statistics."""
    comp, names = contrast.comparison, contrast.comparison.names
    n, unit, through = comp.counts(), names.unit, names.through
    a, b = comp.before_run, comp.after_run
    splits = [f for f in names.lawful if f.key.startswith("lost_")]
    section = Section("transitions", f"Request transitions: {a} -> {b}", intro=(
        f"Every {unit[:-1]} matched by id. Lawful {unit} ({names.lawful_title}) are retained, "
        "lost (to " + ", ".join(f.title.removeprefix("lost to ") for f in splits)
        + f"), gained or neither; forbidden {unit} ({names.forbidden_title}) are "
        + ", ".join(f.title for f in names.forbidden) + f". A {unit[:-1]} went through when "
        "its operation was executed where effects were enforced, else when the dispatch was "
        f"ALLOW. Gains and losses are never netted per {unit[:-1]}."))
    section.notes.extend(contrast.statistics_lines())
    if comp.only_before or comp.only_after or comp.label_mismatch:
        section.notes.append(f"unmatched: {len(comp.only_before)} only in {a}, "
                             f"{len(comp.only_after)} only in {b}, "
                             f"{len(comp.label_mismatch)} with differing labels.")
    section.tables.append(table(
        out, "transitions_lawful", f"lawful {unit} ({names.lawful_title}): transitions, lost "
        "split by the outcome after",
        [{key: n[key] for key in (*(f.key for f in names.lawful), "net", "lawful_completed_before",
                                  "lawful_completed_after", "lawful_matched")}]))
    section.tables.append(table(
        out, "transitions_forbidden", f"forbidden {unit} ({names.forbidden_title}): "
        "transitions", [{key: n[key] for key in (
            *(f.key for f in names.forbidden), f"forbidden_{through}_before",
            f"forbidden_{through}_after", "forbidden_matched")}]))
    for label in ("lawful", "forbidden"):
        matrix = comp.outcome_matrix(label)
        section.tables.append(table(
            out, f"outcomes_{label}", f"{label} {unit}: outcome before (rows) and after "
            "(columns)", [{"before": x, **{y: matrix[(x, y)] for y in names.outcomes}}
                          for x in names.outcomes]))
    lost = [{**c.to_dict(), "lost_to": names.title(c.lost_to).removeprefix("lost to ")
             if c.lost_to else ""} for c in comp.with_transition("lost")]
    cols = ["case_id", "cluster", "path", "before_status", "after_status", "resolved"]
    if lost:
        split = ", ".join(f"{n[f.key]} {f.title.removeprefix('lost ')}" for f in splits)
        section.tables.append(table(out, "lost_requests", f"lost lawful {unit} ({len(lost)}: "
                                    f"{split}): ids and authorization paths", lost,
                                    [*cols[:5], "lost_to", "resolved"], max_rows=500))
    else:
        section.notes.append(f"No lawful {unit[:-1]} was lost.")
    changed = [c.to_dict() for c in comp.changed()]
    section.tables.append(table(out, "changed_requests", f"every changed {unit[:-1]} "
                                f"({len(changed)})", changed, ["transition", *cols, "label"]))
    section.downloads.append(download(out, "requests", comp.rows()))
    section.downloads.append(download(out, "transitions", [n]))  # every count, one row
    total = n["lawful_matched"] + n["forbidden_matched"]
    section.figures.append(figs.add(
        "transitions", "Request transitions", fig.transition_bars,
        [(f.key, f.title, n[f.key]) for f in names.lawful_transitions],
        [(f.key, f.title, n[f.key]) for f in names.forbidden],
        [(f.title, n[f.key]) for f in splits],
        title=f"Request transitions {a} -> {b} (n = {total} matched {unit}: "
              f"{n['lawful_matched']} lawful, {n['forbidden_matched']} forbidden)"))
    return section


def composition_section(out: Path, figs: fig.FigureQueue, members: Sequence[ReportRun],
                         req: ReportRequest) -> Section:
    """Every ordered all-must-allow composition, routing and the cost grid."""
    for other in members[1:]:
        same_dataset(members[0], other, "--compose")
    if guardrail_runs(members) != list(members):  # their records leave out declined cases
        raise ReportInputError("--compose: agent runs are not composed")
    try:
        matrix, results = compose_all({r.name: r.records for r in members})
    except CompositionError as exc:
        raise ReportInputError(f"--compose: {exc}") from exc
    orders = ordered_selections(len(matrix.names))
    rows: list[dict[str, Any]] = []
    routed: list[dict[str, Any]] = []
    for number, (order, result) in enumerate(zip(orders, results, strict=True), start=1):
        route = route_order(matrix, order)  # each request stops at most once
        split = Counter(r["label"] for r in route if r["stop_reason"] == "unavailable")
        rows.append({"#": number, "order": result.name,
                     "incorrect_approvals": result.incorrect_approvals,
                     "lawful_approvals": result.lawful_approvals,
                     "unavailable_forbidden": split["forbidden"],
                     "unavailable_lawful": split["lawful"], "abstentions": result.abstentions,
                     "consultations": result.consultations,
                     "additional_consultations": result.additional_consultations,
                     "input_tokens": result.input_tokens, "output_tokens": result.output_tokens,
                     "reasoning_tokens": result.reasoning_tokens})
        routed.extend(route)
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
    section.downloads.append(download(out, "routed", routed))
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
        xlabel="requests (count)", ylabel="ordered composition"))
    conditions = [condition_from_composition(r) for r in results]
    section.downloads.append(download(out, "break_even", break_even_table(conditions)))
    spec = req.grid or GridSpec()
    grid = cost_grid(conditions, spec)
    status = grid.status_counts()
    section.downloads.append(download(out, "cost_grid", grid.rows))
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
