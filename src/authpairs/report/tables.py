"""Terminal tables and JSON/CSV files for scores, and the renderer that never crops a table.

:func:`print_table` prints any rich :class:`~rich.table.Table` so that every column and every
value is visible in full at the console's width: the table as it is when it fits; otherwise its
columns stacked into several narrower tables that repeat the key column(s); and when even one
column next to the key does not fit, one block of ``header: value`` lines per row. Every table
of the CLI goes through it.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

from rich import box
from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text

from authpairs.analysis.formatting import fraction, percent
from authpairs.analysis.scoring import EFFECT_HEADERS, SCORE_HEADERS, Score, score_cells

__all__ = ["USABLE_CORRECTNESS_NOTE", "fraction", "multi_run_table", "percent", "print_note",
           "print_runs", "print_scores", "print_table", "score_table", "write_scores"]

USABLE_CORRECTNESS_NOTE = ("usable correctness = correct usable decisions / all cases "
                           "(abstentions and unavailable answers count as not correct)")
"""The definition printed under every score table."""


def _plain(cell: RenderableType) -> str:
    if isinstance(cell, Text):
        return cell.plain
    if isinstance(cell, str):
        return Text.from_markup(cell).plain
    return str(cell)


def _width(console: Console, table: Table) -> int:
    """The natural (unconstrained) width of ``table``."""
    options = console.options.update_width(1_000_000)
    return Measurement.get(console, options, table).maximum


def _subtable(table: Table, indices: Sequence[int]) -> Table:
    """A table with the given columns of ``table`` (cells copied, no title)."""
    sub = Table(box=table.box,
                pad_edge=table.pad_edge, collapse_padding=table.collapse_padding,
                show_header=table.show_header, show_edge=table.show_edge,
                padding=table.padding)
    columns = [table.columns[i] for i in indices]
    for column in columns:
        sub.add_column(column.header, justify=column.justify, no_wrap=True,
                       min_width=column.min_width, style=column.style,
                       header_style=column.header_style)
    cells = [list(column.cells) for column in columns]
    for r in range(table.row_count):
        sub.add_row(*(col[r] for col in cells))
    return sub


def _vertical(console: Console, table: Table, title: str | None) -> None:
    """One block per row: ``header: value`` lines, never wrapped by the console."""
    _title(console, title)
    headers = [_plain(c.header).replace("\n", " ") for c in table.columns]
    cells = [[_plain(cell) for cell in c.cells] for c in table.columns]
    for r in range(table.row_count):
        console.print()
        for i, header in enumerate(headers):
            console.print(f"  {header}: {cells[i][r]}", markup=False, highlight=False,
                          soft_wrap=True)
    console.print()


def _title(console: Console, title: str | None) -> None:
    """A table's title on its own lines, wrapped at the console's width (a word longer than the
    width, e.g. a long path, is folded, never cut)."""
    if title:
        print_note(console, Text(title, style="bold"))


def print_note(console: Console, note: str | Text) -> None:
    """A title or footnote of a table, wrapped at the console's width at spaces (a word longer
    than the width is folded); ``note`` is plain text, never read as markup."""
    text = note if isinstance(note, Text) else Text(note)
    text.overflow = "fold"
    console.print(text, highlight=False)


def print_table(console: Console, table: Table, key_columns: int = 1) -> None:
    """Print ``table`` with every column and every value in full at the console's width.

    Fits: printed as it is (no column may wrap or be cropped). Too wide: its columns are split
    over several tables, each repeating the first ``key_columns`` columns. Still too wide
    (very long values at a narrow width): one ``header: value`` block per row. The title is
    printed on its own line above, never squeezed to the table's width.
    """
    for column in table.columns:
        column.no_wrap = True
        column.overflow = "fold"
    title = _plain(table.title) if table.title else None
    table.title = None
    width = console.width
    if _width(console, table) <= width:
        _title(console, title)
        console.print(table)
        console.print()
        return
    n = len(table.columns)
    keys = list(range(min(key_columns, n)))
    groups: list[list[int]] = []
    current: list[int] = []
    for i in range(len(keys), n):
        if _width(console, _subtable(table, [*keys, *current, i])) <= width:
            current.append(i)
            continue
        if not current or _width(console, _subtable(table, [*keys, i])) > width:
            _vertical(console, table, title)  # one column next to the key does not fit
            return
        groups.append(current)
        current = [i]
    if current:
        groups.append(current)
    if not groups:  # only key columns, and they do not fit
        _vertical(console, table, title)
        return
    for part, group in enumerate(groups, start=1):
        _title(console, f"{title or 'table'} (columns, part {part} of {len(groups)})")
        console.print(_subtable(table, [*keys, *group]))
        console.print()


def score_table(title: str, scores: dict[str, Score], key_name: str = "group") -> Table:
    """A rich table with one row per group: counts, rates as ``k/n`` and usable correctness."""
    with_effects = any(s.enforced for s in scores.values())
    table = Table(Column(key_name, no_wrap=True), title=title, box=box.SIMPLE_HEAD,
                  title_justify="left", pad_edge=False, collapse_padding=True,
                  show_edge=False)
    for header in (*SCORE_HEADERS, *(EFFECT_HEADERS if with_effects else ())):
        stacked = _stacked_header(header)
        width = max(len(part) for part in stacked.split("\n"))
        table.add_column(stacked, justify="right", min_width=width)
    for key, s in scores.items():
        table.add_row(Text(key), *score_cells(s, with_effects))  # the notebook view's cells
    return table


def _stacked_header(header: str) -> str:
    """A score column's header on two lines, as narrow as the numbers under it: broken at its
    first space ('usable\\ncorrectness'), 'unavailable' hyphenated."""
    if header == "unavailable":
        return "unavail-\nable"
    return header.replace(" ", "\n", 1)


def print_scores(console: Console, title: str, scores: dict[str, Score],
                 key_name: str = "group") -> None:
    """Print a score table, the definition of usable correctness, and unavailable reasons."""
    print_table(console, score_table(title, scores, key_name))
    print_note(console, USABLE_CORRECTNESS_NOTE)
    reasons: dict[str, int] = {}
    for score in scores.values():
        for reason, count in score.unavailable_by_reason.items():
            reasons[reason] = reasons.get(reason, 0) + count
    if reasons and len(scores) == 1:
        print_note(console, "unavailable by reason: "
                   + ", ".join(f"{k}={v}" for k, v in reasons.items()))
    console.print()


def write_scores(out_dir: str | Path, stem: str, scores: dict[str, Score],
                 key_name: str = "group", extra: dict[str, object] | None = None) -> list[Path]:
    """Write ``<stem>.json`` and ``<stem>.csv``; returns the paths. ``extra`` (e.g. the run's
    ``expected`` and ``recorded`` case counts) is added to every row."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    from authpairs.analysis.runref import unverified_notice

    rows = [{key_name: key, **score.to_dict(), **(extra or {}), **unverified_notice()}
            for key, score in scores.items()]
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
            unverified = flat.get("unverified_runs")
            if isinstance(unverified, list):
                flat["unverified_runs"] = "|".join(str(r) for r in unverified)
            writer.writerow(flat)
    return [json_path, csv_path]


_RUN_COLUMNS = [("n", "n"), ("correct", "correct"), ("incorrect_approvals", "incorrect\napprovals"),
                ("false_denials", "false\ndenials"), ("abstentions", "abstain"),
                ("unavailable", "unavail-\nable"), ("forbidden_effects", "forbidden\neffects"),
                ("lawful_completions", "lawful\ncompleted"),
                ("audit_failures", "audit\nfailed"), ("usable_correctness", "usable\n%"),
                ("output_tokens", "output\ntokens"), ("config_sha256", "config")]


_EFFECT_KEYS = ("forbidden_effects", "lawful_completions", "audit_failures")


def multi_run_table(rows: list[dict[str, object]]) -> Table:
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
    print_table(console, multi_run_table(rows))
    manifests = {str(row.get("manifest_sha256")) for row in rows}
    if len(manifests) == 1:
        print_note(console, f"dataset {rows[0].get('dataset')}, manifest {manifests.pop()}")
    for row in rows:
        if row.get("reviewer"):
            print_note(console, f"{row['run']}: {row['reviewer']}")
        if row.get("unavailable_by_reason"):
            print_note(console, f"{row['run']}: unavailable by reason: "
                                f"{row['unavailable_by_reason']}")
        if not row.get("complete", True):
            print_note(console, Text(f"* {row['run']} is incomplete: {row['recorded']} of "
                                     f"{row['expected']} cases recorded", style="yellow"))
