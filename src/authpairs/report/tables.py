"""The commands' tables of scores, runs (the ``runs`` listing and the multi-run scores),
contrast families and costs, as
:class:`~authpairs.analysis.notebook.TableView` s: a command prints one with
``console.print(view, crop=False)`` (never cropped) and writes its data with
:mod:`authpairs.report.files`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from authpairs.analysis.formatting import format_p, fraction
from authpairs.analysis.notebook import TableView
from authpairs.analysis.scoring import Score
from authpairs.report.files import write_csv, write_json
from authpairs.report.reviewer_name import name_run
from authpairs.runs.records import RunInfo

if TYPE_CHECKING:  # numpy and scipy load only where contrasts and grids are computed
    from authpairs.analysis.contrast import Contrast
    from authpairs.analysis.cost import GridResult

__all__ = ["break_even_view", "describe_run", "family_view", "grid_view",
           "runs_table", "runs_view", "write_scores"]


def write_scores(out_dir: str | Path, stem: str, scores: Mapping[str, Score],
                 key_name: str = "group", extra: dict[str, object] | None = None) -> list[Path]:
    """Write ``<stem>.json`` and ``<stem>.csv`` (one row per group); returns the paths.
    ``extra`` (e.g. the run's ``expected`` and ``recorded`` case counts) is added to every
    row."""
    rows = [{key_name: key, **score.to_dict(), **(extra or {})} for key, score in scores.items()]
    out = Path(out_dir)
    return [write_json(out / f"{stem}.json", rows), write_csv(out / f"{stem}.csv", rows)]


_RUN_COLUMNS = [("n", "n"), ("correct", "correct"),
                ("incorrect_approvals", "incorrect approvals"),
                ("false_denials", "false denials"), ("abstentions", "abstain"),
                ("unavailable", "unavailable"), ("forbidden_effects", "forbidden effects"),
                ("lawful_completions", "lawful completed"), ("audit_failures", "audit failed"),
                ("usable_correctness", "usable %"), ("output_tokens", "output tokens"),
                ("config_sha256", "config")]
_EFFECT_KEYS = ("forbidden_effects", "lawful_completions", "audit_failures")


def runs_view(rows: Sequence[dict[str, Any]]) -> TableView:
    """The multi-run table (the terminal's and the HTML report's): one row per run (rows from
    ``authpairs.report.measures.run_row``), the dataset, each run's reviewer and unavailable
    answers by reason and the incomplete runs in notes.

    Effect columns (shown when any run enforced effects) read '-' for runs that did not; an
    incomplete run is marked with '*' after its name. Hashes are shortened to 8 hex digits;
    the dataset manifest is a column only when the runs reviewed different datasets.
    """
    enforced = any(row.get("enforced") for row in rows)
    columns = [c for c in _RUN_COLUMNS if enforced or c[0] not in _EFFECT_KEYS]
    manifests = {str(row.get("manifest_sha256")) for row in rows}
    if len(manifests) > 1:
        columns.append(("manifest_sha256", "manifest"))

    def cell(row: dict[str, Any], key: str) -> str:
        value = row.get(key)
        if value is None:
            return "-"
        if key.endswith("_sha256"):
            return str(value)[:8]
        if key in ("forbidden_effects", "lawful_completions"):
            return fraction(value, row["forbidden" if key == "forbidden_effects" else "lawful"])
        return str(value)

    notes = [f"dataset {rows[0].get('dataset')}, manifest {manifests.pop()}"
             ] if len(manifests) == 1 else []
    for row in rows:
        notes += [f"{row['run']}: {row['reviewer']}"] if row.get("reviewer") else []
        notes += [f"{row['run']}: unavailable by reason: {row['unavailable_by_reason']}"
                  ] if row.get("unavailable_by_reason") else []
        notes += [f"* {row['run']} is incomplete: {row['recorded']} of {row['expected']} cases "
                  "recorded"] if not row.get("complete", True) else []
    return TableView(f"{len(rows)} runs", ["run", *(header for _, header in columns)],
                     [[str(row["run"]) + ("" if row.get("complete", True) else " *"),
                       *(cell(row, key) for key, _ in columns)] for row in rows], notes,
                     keys=["run", *(key for key, _ in columns)])


def family_view(contrasts: Sequence[Contrast], title: str) -> TableView:
    """One row per contrast of a family with raw and Holm-adjusted p-values."""
    rows = []
    for c in contrasts:
        n, s = c.comparison.counts(), c.stats
        flip = format_p(s.sign_flip.p_value) + ("*" if s.sign_flip.method == "monte-carlo"
                                                 else "")
        rows.append([c.name, *(str(n[k]) for k in (
            "retained", "lost", "lost_denied", "lost_unavailable", "gained")), f"{n['net']:+d}",
            *(str(n[k]) for k in ("newly_approved", "newly_blocked", "newly_unavailable")),
            f"{s.bootstrap.low:+.2f} to {s.bootstrap.high:+.2f}", format_p(s.mcnemar_p), flip,
            format_p(c.holm_sign_flip_p), format_p(c.holm_mcnemar_p)])
    notes = ["lawful: retained / lost (of which lost to denial, lost to unavailability) / "
             "gained (net = gained - lost, never netted per request); forb + / - / ?: "
             "forbidden requests newly approved / newly blocked by a usable denial / newly "
             "unavailable"]
    if any(c.stats.sign_flip.method == "monte-carlo" for c in contrasts):
        notes.append("* sign-flip p estimated by seeded Monte Carlo (too many clusters to "
                     "enumerate)")
    return TableView(f"{title}: {len(contrasts)} contrasts, Holm over the whole family",
                     ["contrast", "retained", "lost", "lost denied", "lost unavail.", "gained",
                      "net", "forb +", "forb -", "forb ?", "bootstrap 95% (pp)", "McNemar p",
                      "sign-flip p", "Holm sign-flip", "Holm McNemar"], rows, notes)


def grid_view(grid: GridResult) -> TableView:
    """How often each condition is selected by a cell of the grid, and the cells by status."""
    counts = grid.status_counts()
    label = "with prevalence" if grid.with_prevalence else "count loss"
    return TableView(
        f"cost grid ({label}): {len(grid.rows):,} cells -- {counts['unique']} unique, "
        f"{counts['tie']} tied, {counts['infeasible']} infeasible",
        ["condition", "cells selected (ties count for each)"],
        [[name, str(k)] for name, k in grid.win_counts().items()])


def break_even_view(rows: Sequence[dict[str, Any]], limit: int = 30) -> TableView:
    """Severity break-even r = dD/dU (zero token prices) of the first ``limit`` pairs that
    have one; the rest (and the output-price break-evens) are in ``break_even.csv``."""
    shown = [row for row in rows if row["break_even_r"] is not None][:limit]
    rest = len(rows) - len(shown)
    return TableView(
        "break-even severity ratios (zero token prices)",
        ["riskier", "safer", "dU", "dD", "break-even r"],
        [[row["riskier"], row["safer"], str(row["delta_incorrect_approvals"]),
          str(row["delta_lawful_nonapprovals"]),
          "dominates" if row["break_even_r"] <= 0 else f"{row['break_even_r']:g}"]
         for row in shown],
        [f"... {rest} more pairs (incl. output-price break-evens) in break_even.csv (--out)"]
        if rest else [], key_columns=2)


RUN_LIST_COLUMNS = ["run id", "reviewer", "interface", "model", "dataset", "effects",
                    "recorded", "created (UTC)"]
"""The columns of the ``runs`` listing."""


def describe_run(info: RunInfo, recorded: int) -> dict[str, str]:
    """Plain row: run id, the reviewer that ran (interface, guardrail or baseline; how it was
    asked; the model it called, ``-`` for none), dataset/split, effects enforced or not,
    recorded/expected cases and date."""
    resolved = info.config.get("resolved", {})
    name = name_run(info.config)
    dataset = str(resolved.get("dataset", info.manifest.get("name", "?")))
    split = resolved.get("split")
    limit = resolved.get("limit")
    where = f"{dataset} {split}" if split else dataset
    if limit:
        where += f" (first {limit})"
    if resolved.get("sample"):
        where += f" (sample {resolved['sample']}, seed {resolved.get('sample_seed', 0)})"
    expected = len(info.expected_case_ids) or info.manifest.get("n_cases")
    flag = ""
    if expected and recorded < int(expected):  # an agent run records the cases it took on
        flag = (f" ({int(expected) - recorded} declined)" if info.is_agent_run
                else " INCOMPLETE")
    reviewer = name.reviewer if name.kind == "interface" else f"{name.kind} {name.reviewer}"
    return {"run id": info.run_id, "reviewer": reviewer, "interface": name.interface,
            "model": name.model, "dataset": where,
            "effects": "enforced" if resolved.get("enforce", True) else "off",
            "recorded": f"{recorded}/{expected if expected else '?'}{flag}",
            "created (UTC)": info.created_at.replace("T", " ").split("+")[0]}


def runs_table(rows: list[dict[str, str]], title: str) -> TableView:
    """A table of :func:`describe_run` rows (interface and model only when a run has one)."""
    columns = [name for name in RUN_LIST_COLUMNS if name not in ("interface", "model")
               or any(row[name] != "-" for row in rows)]
    return TableView(title, columns, [[row[name] for name in columns] for row in rows],
                     numeric=[name == "recorded" for name in columns])
