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
        rate = score.usable_correctness
        table.add_row(key, *cells, "n/a" if rate is None else f"{rate:.1%}")
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
                 key_name: str = "group", extra: dict[str, object] | None = None) -> list[Path]:
    """Write ``<stem>.json`` and ``<stem>.csv``; returns the paths. ``extra`` (e.g. the run's
    ``expected`` and ``recorded`` case counts) is added to every row."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = [{key_name: key, **score.to_dict(), **(extra or {})} for key, score in scores.items()]
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
