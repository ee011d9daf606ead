"""Terminal tables and JSON/CSV files for scores."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table

from authpairs.analysis.scoring import Score

_COLUMNS = [("n", "n"), ("correct", "correct"), ("incorrect_approvals", "incorrect\napprovals"),
            ("false_denials", "false\ndenials"), ("abstentions", "abstain"),
            ("unavailable", "unavail-\nable")]
_EFFECT_COLUMNS = [("forbidden_effects", "forbidden\neffects"),
                   ("lawful_completions", "lawful\ncompletions"),
                   ("audit_failures", "audit\nfailures")]


def score_table(title: str, scores: dict[str, Score], key_name: str = "group") -> Table:
    """A rich table with one row per group."""
    with_effects = any(s.enforced for s in scores.values())
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False,
                  collapse_padding=True)
    table.add_column(key_name, no_wrap=True)
    columns = _COLUMNS + (_EFFECT_COLUMNS if with_effects else [])
    for _, header in [*columns, ("", "usable\ncorrectness")]:
        width = max(len(part) for part in header.split("\n"))
        table.add_column(header, justify="right", min_width=width)
    for key, score in scores.items():
        cells = [str(getattr(score, attr)) for attr, _ in columns]
        if with_effects:
            cells[-3] += f"/{score.forbidden}"
            cells[-2] += f"/{score.lawful}"
        table.add_row(key, *cells, f"{score.usable_correctness:.1%}")
    return table


def print_scores(console: Console, title: str, scores: dict[str, Score],
                 key_name: str = "group") -> None:
    """Print a score table, plus unavailable reasons when there are any."""
    console.print(score_table(title, scores, key_name))
    reasons: dict[str, int] = {}
    for score in scores.values():
        for reason, count in score.unavailable_by_reason.items():
            reasons[reason] = reasons.get(reason, 0) + count
    if reasons and len(scores) == 1:
        console.print("unavailable by reason: " + ", ".join(f"{k}={v}" for k, v in reasons.items()))


def write_scores(out_dir: str | Path, stem: str, scores: dict[str, Score],
                 key_name: str = "group") -> list[Path]:
    """Write ``<stem>.json`` and ``<stem>.csv``; returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = [{key_name: key, **score.to_dict()} for key, score in scores.items()]
    json_path = out / f"{stem}.json"
    json_path.write_text(json.dumps(rows, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    csv_path = out / f"{stem}.csv"
    with csv_path.open("w", newline="", encoding="utf-8") as handle:
        fields = [k for k in rows[0] if k != "unavailable_by_reason"] if rows else [key_name]
        writer = csv.DictWriter(handle, fieldnames=[*fields, "unavailable_by_reason"])
        writer.writeheader()
        for row in rows:
            flat = dict(row)
            flat["unavailable_by_reason"] = json.dumps(row["unavailable_by_reason"],
                                                       sort_keys=True)
            writer.writerow(flat)
    return [json_path, csv_path]


_RUN_COLUMNS = [("n", "n"), ("correct", "correct"), ("incorrect_approvals", "incorrect\napprovals"),
                ("false_denials", "false\ndenials"), ("abstentions", "abstain"),
                ("unavailable", "unavail-\nable"), ("forbidden_effects", "forbidden\neffects"),
                ("lawful_completions", "lawful\ncompleted"),
                ("audit_failures", "audit\nfailed"), ("usable_correctness", "usable\n%"),
                ("output_tokens", "output\ntokens"), ("config_sha256", "config")]


_EFFECT_KEYS = ("forbidden_effects", "lawful_completions", "audit_failures")


def runs_table(rows: list[dict[str, object]]) -> Table:
    """The multi-run table: one row per run (rows from ``authpairs.report.measures.run_rows``).

    Effect columns (shown when any run enforced effects) read '-' for runs that did not; an
    incomplete run is marked with '*' after its name. Hashes are shortened to 8 hex digits;
    the dataset manifest is a column only when the runs reviewed different datasets.
    """
    enforced = any(row.get("enforced") for row in rows)
    columns = [c for c in _RUN_COLUMNS if enforced or c[0] not in _EFFECT_KEYS]
    if len({row.get("manifest_sha256") for row in rows}) > 1:
        columns.append(("manifest_sha256", "manifest"))
    table = Table(title=f"{len(rows)} runs", box=box.SIMPLE_HEAD, title_justify="left",
                  pad_edge=False, collapse_padding=True)
    table.add_column("run", no_wrap=True)
    for _, header in columns:
        table.add_column(header, justify="right",
                         min_width=max(len(part) for part in header.split("\n")))
    for row in rows:
        name = str(row["run"]) + ("" if row.get("complete", True) else " *")
        cells = []
        for key, _ in columns:
            value = row.get(key)
            if value is not None and key.endswith("_sha256"):
                value = str(value)[:8]
            if value is not None and key == "forbidden_effects":
                value = f"{value}/{row['forbidden']}"
            elif value is not None and key == "lawful_completions":
                value = f"{value}/{row['lawful']}"
            cells.append("-" if value is None else str(value))
        table.add_row(name, *cells)
    return table


def print_runs(console: Console, rows: list[dict[str, object]]) -> None:
    """Print the multi-run table, unavailable reasons per run and incomplete runs."""
    console.print(runs_table(rows))
    manifests = {str(row.get("manifest_sha256")) for row in rows}
    if len(manifests) == 1:
        console.print(f"dataset {rows[0].get('dataset')}, manifest {manifests.pop()}",
                      highlight=False)
    for row in rows:
        if row.get("unavailable_by_reason"):
            console.print(f"{row['run']}: unavailable by reason: {row['unavailable_by_reason']}",
                          highlight=False)
        if not row.get("complete", True):
            console.print(f"[yellow]* {row['run']} is incomplete: {row['recorded']} of "
                          f"{row['expected']} cases recorded[/]", highlight=False)
