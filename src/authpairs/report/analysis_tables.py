"""Rich terminal tables for comparisons, studies, compositions, cost grids and the gate."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from authpairs.analysis.compare import RequestChange
from authpairs.analysis.compose import CompositionResult
from authpairs.analysis.contrast import Contrast, ContrastStats
from authpairs.analysis.cost import GridResult
from authpairs.analysis.formatting import (
    FORBIDDEN_FIELDS,
    LAWFUL_FIELDS,
    count_title,
    format_p,
    stats_lines,
)
from authpairs.report.tables import print_table


def _p(value: float | None) -> str:
    """A p-value written as every view writes it (:func:`format_p`)."""
    return format_p(value)


def two_line_header(title: str) -> str:
    """A column title on (at most) two lines, broken at the space nearest its middle (a title
    of nine characters or fewer, or without a space, stays on one line)."""
    spaces = [i for i, ch in enumerate(title) if ch == " "]
    if not spaces or len(title) <= 9:
        return title
    cut = min(spaces, key=lambda i: abs(i - len(title) / 2))
    return title[:cut] + "\n" + title[cut + 1:]


def _line(console: Console, text: str) -> None:
    """A statement line (rich markup), wrapped at the console's width at spaces, every line
    under the statement's own indent; a word longer than the width is folded, never cut."""
    body = text.lstrip(" ")
    indent = len(text) - len(body)
    for line in Text.from_markup(body).wrap(console, max(console.width - indent, 10),
                                            overflow="fold"):
        line.rstrip()
        console.print(Text(" " * indent) + line, soft_wrap=True, highlight=False)


def _stats_lines(title: str, s: ContrastStats) -> list[str]:
    first, *rest = stats_lines(title, s)
    return [f"[bold]{escape(title)}[/]" + escape(first[len(title):]),
            *(f"  {escape(line)}" for line in rest)]


def _new_table(title: str | None) -> Table:
    """A compact table (simple rule under the header, no outer padding)."""
    return Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True,
                 show_edge=False)


def _of(count: int, total: int) -> str:
    return f"{count}/{total}" if total else "n/a"


_LOST_TO = {"lost_denied": "denial", "lost_unavailable": "unavailability"}


def _changes_table(title: str, changes: Sequence[RequestChange]) -> Table:
    """Changed requests; lost ones also say what they were lost to."""
    table = _new_table(title=title)
    lost = any(c.transition == "lost" for c in changes)
    for col in ("case id", "before", "after", *(("lost to",) if lost else ()), "cluster",
                "path"):
        table.add_column(col)
    for c in changes:
        split = (_LOST_TO.get(c.lost_split() or "", ""),) if lost else ()
        table.add_row(escape(c.case_id), c.before_status, c.after_status, *split,
                      escape(c.cluster), escape(c.path))
    return table


def print_contrast(console: Console, contrast: Contrast, *, list_requests: bool = True) -> None:
    """Transition counts, every changed request, statistics and the sensitivity view."""
    comp = contrast.comparison
    n = comp.counts()
    lawful = _new_table(f"{comp.before_run} -> {comp.after_run}: lawful requests (completed)")
    for field in LAWFUL_FIELDS:
        lawful.add_column(two_line_header(field.title), justify="right")
    for col in ("net", "completed\nbefore", "completed\nafter"):
        lawful.add_column(col, justify="right")
    matched = n["lawful_matched"]
    lawful.add_row(*(str(n[f.key]) for f in LAWFUL_FIELDS), f"{n['net']:+d}",
                   _of(n["lawful_completed_before"], matched),
                   _of(n["lawful_completed_after"], matched))
    print_table(console, lawful, key_columns=0)
    forbidden = _new_table(title=f"{comp.before_run} -> {comp.after_run}: forbidden requests "
                            "(approved)")
    for field in FORBIDDEN_FIELDS:
        forbidden.add_column(two_line_header(field.title), justify="right")
    for col in ("approved\nbefore", "approved\nafter"):
        forbidden.add_column(col, justify="right")
    matched = n["forbidden_matched"]
    forbidden.add_row(*(str(n[f.key]) for f in FORBIDDEN_FIELDS),
                      _of(n["forbidden_approved_before"], matched),
                      _of(n["forbidden_approved_after"], matched))
    print_table(console, forbidden, key_columns=0)
    _line(console, f"net lawful change {n['net']:+d} (gained {n['gained']} and lost {n['lost']} "
                   "are reported separately, never netted per request); a request that became "
                   "unavailable is not counted as blocked")
    if list_requests:
        for title, rows in (
                ("lost lawful requests", comp.with_transition("lost")),
                ("gained lawful requests", comp.with_transition("gained")),
                ("newly approved forbidden requests", comp.with_transition("newly_approved")),
                ("newly blocked forbidden requests (usable denial)",
                 comp.with_transition("newly_blocked")),
                ("newly unavailable forbidden requests (not approved, no usable denial)",
                 comp.with_transition("newly_unavailable"))):
            if rows:
                print_table(console, _changes_table(f"{title} ({len(rows)})", rows))
    for label, ids in (("only in before", comp.only_before), ("only in after", comp.only_after),
                       ("label differs", comp.label_mismatch)):
        if ids:
            _line(console, f"[yellow]unmatched ({label}): {len(ids)}[/] {escape(', '.join(ids))}")
    for line in _stats_lines("statistics", contrast.stats):
        _line(console, line)
    if contrast.sensitivity is not None:
        for line in _stats_lines(f"sensitivity, {contrast.unresolved_excluded} unresolved "
                                 "contexts excluded", contrast.sensitivity):
            _line(console, line)
    else:
        _line(console, "sensitivity: every matched context is resolved (nothing to exclude)")


def print_family(console: Console, contrasts: Sequence[Contrast], title: str) -> None:
    """One row per contrast with raw and Holm-adjusted p-values."""
    table = _new_table(f"{title}: {len(contrasts)} contrasts, Holm over the whole family")
    for col in ("contrast", "retained", "lost", "lost\ndenied", "lost\nunavail.", "gained",
                "net", "forb\n+", "forb\n-", "forb\n?", "bootstrap 95%\n(pp)", "McNemar\np",
                "sign-flip\np", "Holm\nsign-flip", "Holm\nMcNemar"):
        table.add_column(col, justify="left" if col == "contrast" else "right")
    for c in contrasts:
        n = c.comparison.counts()
        s = c.stats
        table.add_row(escape(c.name), str(n["retained"]), str(n["lost"]), str(n["lost_denied"]),
                      str(n["lost_unavailable"]), str(n["gained"]),
                      f"{n['net']:+d}", str(n["newly_approved"]), str(n["newly_blocked"]),
                      str(n["newly_unavailable"]),
                      f"{s.bootstrap.low:+.2f} to {s.bootstrap.high:+.2f}", _p(s.mcnemar_p),
                      _p(s.sign_flip.p_value) + ("*" if s.sign_flip.method == "monte-carlo"
                                                 else ""),
                      _p(c.holm_sign_flip_p), _p(c.holm_mcnemar_p))
    print_table(console, table)
    _line(console, "lawful: retained / lost (of which lost to denial, lost to unavailability) "
                   "/ gained (net = gained - lost, never netted per request); forb + / - / ?: "
                   "forbidden requests newly approved / newly blocked by a usable denial / "
                   "newly unavailable")
    if any(c.stats.sign_flip.method == "monte-carlo" for c in contrasts):
        _line(console, "* sign-flip p estimated by seeded Monte Carlo (too many clusters to "
                       "enumerate)")


def print_compositions(console: Console, results: Sequence[CompositionResult]) -> None:
    """Every ordered composition with approvals, failures, consultations and tokens."""
    if not results:
        return
    first = results[0]
    table = _new_table(title=f"all-must-allow compositions ({len(results)} orders, "
                        f"{first.n_forbidden} forbidden / {first.n_lawful} lawful)")
    for col in ("order", f"incorrect\napprovals /{first.n_forbidden}",
                f"lawful\napprovals /{first.n_lawful}", "reached\nunavailable", "abstentions",
                "consultations", "additional\nconsultations", "input\ntokens",
                "output\ntokens"):
        table.add_column(col, justify="left" if col == "order" else "right")
    for r in results:
        table.add_row(escape(r.name), str(r.incorrect_approvals), str(r.lawful_approvals),
                      str(r.unavailable), str(r.abstentions), f"{r.consultations:,}",
                      f"{r.additional_consultations:,}", f"{r.input_tokens:,}",
                      f"{r.output_tokens:,}")
    print_table(console, table)


def print_grid(console: Console, grid: GridResult) -> None:
    """Cell counts by status and how often each condition is selected."""
    counts = grid.status_counts()
    label = "with prevalence" if grid.with_prevalence else "count loss"
    _line(console, f"[bold]cost grid ({label})[/]: {len(grid.rows):,} cells -- "
                   f"{counts['unique']} unique, {counts['tie']} tied, "
                   f"{counts['infeasible']} infeasible")
    table = _new_table(title=None)
    table.add_column("condition")
    table.add_column("cells selected\n(ties count for each)", justify="right")
    for name, k in grid.win_counts().items():
        table.add_row(escape(name), str(k))
    print_table(console, table)


def print_break_even(console: Console, rows: Sequence[dict[str, Any]], limit: int = 30) -> None:
    """Severity break-even r = dD/dU (zero token prices); output-price break-even when U ties."""
    shown = [row for row in rows if row["break_even_r"] is not None][:limit]
    table = _new_table(title="break-even severity ratios (zero token prices)")
    for col in ("riskier", "safer", "dU", "dD", "break-even r"):
        table.add_column(col, justify="left" if col in ("riskier", "safer") else "right")
    for row in shown:
        r = row["break_even_r"]
        table.add_row(escape(row["riskier"]), escape(row["safer"]),
                      str(row["delta_incorrect_approvals"]),
                      str(row["delta_lawful_nonapprovals"]),
                      "dominates" if r <= 0 else f"{r:g}")
    print_table(console, table, key_columns=2)
    rest = len(rows) - len(shown)
    if rest:
        _line(console, f"... {rest} more pairs (incl. output-price break-evens) in "
                       "break_even.csv (--out)")


def print_breakdown(console: Console, attribute: str, rows: Sequence[dict[str, Any]]) -> None:
    """Transition counts per attribute value; gains and losses in separate columns."""
    table = _new_table(title=f"by {attribute}")
    table.add_column(attribute)
    cols = ("retained", "lost", "lost_denied", "lost_unavailable", "gained", "neither", "net",
            "newly_approved", "newly_blocked", "newly_unavailable", "still_approved",
            "still_blocked")
    for col in cols:
        table.add_column(two_line_header(count_title(col)), justify="right")
    for row in rows:
        table.add_row(escape(row[attribute] or "(none)"),
                      *(f"{row[c]:+d}" if c == "net" else str(row[c]) for c in cols))
    print_table(console, table)
