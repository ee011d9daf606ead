"""Report sections read from each run: the runs table, seeds, breakdowns, engines, groups, and
each agent run's stack outcomes (the numbers of ``authpairs score`` on the same runs: the same
result objects, :mod:`authpairs.analysis.agent_runs`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from authpairs.analysis.agent_runs import stack_view
from authpairs.analysis.outcomes import DECISIONS
from authpairs.report import figures as fig
from authpairs.report import measures
from authpairs.report.request import ReportRequest
from authpairs.report.runset import ReportRun
from authpairs.report.sections import Section, download, table
from authpairs.report.tables import runs_view

ATTRIBUTES = ("family", "domain", "scenario")


def runs_section(out: Path, runs: Sequence[ReportRun]) -> Section | str:
    """The multi-run table of the guardrail runs (the terminal's :func:`runs_view`), or why
    there is none."""
    if not runs:
        return "no guardrail run (agent runs are in the agent section)"
    section = Section("runs", "Runs", intro=(
        "One row per run: every outcome measure (all cases stay in every denominator), "
        "unavailable responses by reason and the run's identity; the CSV adds every token "
        "count, the hashes and versions. Shape of the paper's Tables 1, 4, 5 and 6."))
    rows = [measures.run_row(r) for r in runs]
    section.tables.append(replace(runs_view(rows), source=download(out, "runs", rows)))
    return section


def seeds_section(out: Path, figs: fig.FigureQueue, runs: Sequence[ReportRun],
                   labels: dict[str, str], req: ReportRequest) -> Section | str:
    """Rates across seeds per configuration, or the reason there is none."""
    multi = [g for g in measures.seed_groups(runs, labels) if len(g.runs) > 1]
    if not multi:
        return "no configuration was run with more than one seed"
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


def column_names(runs: Sequence[ReportRun], columns: dict[str, str] | None
                 ) -> tuple[list[str], str]:
    """Each run's column name (its study cell's factor levels where known, else its id) and
    the axis label that says which."""
    names = [(columns or {}).get(r.name, r.name) for r in runs]
    study = sum(n != r.name for n, r in zip(names, runs, strict=True))
    if not study:
        return names, "run"
    return names, ("study cell (factor levels)" if study == len(runs)
                   else "run, or study cell (factor levels)")


def breakdown_section(out: Path, figs: fig.FigureQueue, runs: Sequence[ReportRun],
                      columns: dict[str, str] | None = None) -> Section | str:
    """Usable-correctness heatmaps by family, domain and scenario (those present); columns are
    named by ``columns`` (run id -> study factor levels) where given."""
    present = [a for a in ATTRIBUTES if measures.has_attribute(runs, a)]
    if not present:
        return "the records carry no family, domain or scenario attribute"
    section = Section("breakdowns", "Usable correctness by family, domain and scenario", intro=(
        "Usable correctness (correct usable decisions over all inputs of the cell; unavailable "
        "responses count as incorrect) per run. Paper Figures 3-5. Hatched cells: the run has "
        "no input with that value."))
    names, axis = column_names(runs, columns)
    for attribute in present:
        values, pct, n = measures.attribute_matrix(runs, attribute)
        rows = measures.matrix_rows(attribute, values, names, pct, n)
        wide = [{attribute: v, **{c: (None if np.isnan(pct[i, j]) else round(float(pct[i, j]), 1))
                                  for j, c in enumerate(names)}} for i, v in enumerate(values)]
        section.downloads.append(download(out, f"correctness_by_{attribute}", rows))
        block = table(out, f"correctness_by_{attribute}_wide",
                      f"usable correctness (%) by {attribute}", wide)
        if len(names) <= 12:
            section.tables.append(block)
        else:
            section.downloads.append(block.source)
        section.figures.append(figs.add(
            f"correctness_by_{attribute}", f"Usable correctness by {attribute}",
            fig.correctness_heatmap, attribute, values, names, pct, n, xlabel=axis))
    return section


def engine_section(out: Path, figs: fig.FigureQueue, runs: Sequence[ReportRun],
                   columns: dict[str, str] | None = None) -> Section | str:
    """The native engine x reference-label cross-table, or why it is left out; runs are named
    by ``columns`` (run id -> study factor levels) where given."""
    rows = measures.engine_label_rows(runs)
    if not rows:
        return "no native-track records (no engine attribute)"
    shown = dict(zip((r.name for r in runs), column_names(runs, columns)[0], strict=True))
    section = Section("engines", "Native engine x reference label", intro=(
        "Outcomes per native engine and reference label (permit = lawful, deny = forbidden). "
        "Paper Figure 6. Cells: share of the row's inputs (%), with the count."))
    section.tables.append(table(out, "engine_label", "outcome counts by engine and label", rows))
    names = [f"{shown.get(r['run'], r['run'])} · {r['engine']} · {r['label']} ({r['n']})"
             for r in rows]
    counts = np.array([[r[o] for o in DECISIONS] for r in rows], dtype=np.float64)
    pct = 100.0 * counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    text = [[f"{pct[i, j]:.0f}% ({int(counts[i, j])})" for j in range(len(DECISIONS))]
            for i in range(len(rows))]
    total = sum(r["n"] for r in rows)
    section.figures.append(figs.add(
        "engine_label", "Engine x reference label", fig.heatmap,
        pct, names, DECISIONS, title=f"Native outcomes by engine and reference label "
        f"(n = {total} inputs over {len(runs)} runs)", xlabel="outcome",
        ylabel="run · engine · reference label (inputs)", cbar_label="share of row (%)",
        vmin=0, vmax=100, text=text))
    return section


def groups_section(out: Path, runs: Sequence[ReportRun]) -> Section | str:
    """Native group measures and language full-quartet correctness."""
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


def overview(runs: Sequence[ReportRun], omitted: dict[str, str]) -> Section:
    """Runs, datasets, incomplete runs (named) and the sections left out, with reasons."""
    section = Section("overview", "Overview")
    datasets = sorted({r.dataset for r in runs})
    section.notes.append(f"{len(runs)} run(s) on {', '.join(datasets)}; "
                         f"{sum(len(r.records) for r in runs):,} case records.")
    section.notes.append("Reviewers: " + "; ".join(f"{r.name}: {r.reviewer}" for r in runs)
                         + ".")
    bad = [r for r in runs if not r.complete]
    section.notes.extend(f"INCOMPLETE: run '{r.name}' has {len(r.records)} of {r.expected} "
                         f"case records ({r.missing} missing); its measures cover the recorded "
                         "cases only." for r in bad)
    if not bad:
        section.notes.append("Every run is complete (a record for every selected case).")
    for key, reason in omitted.items():
        section.notes.append(f"Not shown: {key} ({reason}).")
    return section


def agent_section(out: Path, runs: Sequence[ReportRun]) -> Section | None:
    """The agent-runs section; None when no run is an agent run (the section is then not
    part of the page, nor counted as omitted)."""
    scores = [run.agent_score for run in runs if run.agent_score is not None]
    if not scores:
        return None
    section = Section("agent", "Agent runs: the agent + guardrail stack", intro=(
        "Every case an agent run offered gets one outcome of the whole stack: the agent "
        "declined (no call reached the guardrail), the guardrail blocked its last reviewed "
        "call, the call got no usable decision (unavailable), or a call executed. Forbidden "
        "effects count forbidden cases where any operation executed; lawful completions count "
        "lawful cases whose own operation executed (docs/definitions.md, docs/agents.md). An "
        "agent run's case records leave out the cases the agent declined, so the sections of "
        "guardrail runs leave agent runs out."))
    section.notes.extend(score.summary_note() for score in scores)
    section.tables.append(replace(stack_view(
        "stack outcomes by label", {score.run_id: score.overall for score in scores}, "run"),
        source=download(out, "agent_stack", [{"run": score.run_id, **row} for score in scores
                                             for row in score.overall.frame()[1]])))
    families = {score.run_id: score.by("family") for score in scores
                if "family" in score.attributes()}
    if families:
        section.tables.append(replace(stack_view(
            "stack outcomes by family", {f"{run} · {family}": group for run, by in
                                         families.items() for family, group in by.items()},
            "run · family"), source=download(out, "agent_stack_by_family", [
                {"run": run, **row} for run, by in families.items() for row in by.frame()[1]])))
    return section
