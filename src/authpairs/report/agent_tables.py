"""Terminal tables and JSON/CSV files of agent runs: the stack score of one run and the
comparison of two.

The tables are the result objects' own :class:`~authpairs.analysis.notebook.TableView` s (the
rows a notebook shows), printed through :func:`~authpairs.report.tables.print_table`, so the
terminal, the notebook and the files write the same counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from authpairs.analysis.agent_compare import AgentComparison
from authpairs.analysis.agent_scores import AgentRunScore, StackScores
from authpairs.analysis.notebook import TableView
from authpairs.report.analysis_tables import two_line_header
from authpairs.report.files import write_csv, write_json
from authpairs.report.tables import print_table


def view_table(view: TableView) -> Table:
    """A rich table of ``view`` (its key columns left-aligned, the others right-aligned)."""
    table = Table(title=view.title or None, box=box.SIMPLE_HEAD, pad_edge=False,
                  collapse_padding=True, show_edge=False, title_justify="left")
    for i, header in enumerate(view.headers):
        table.add_column(two_line_header(header), justify="left" if i < view.key_columns
                         else "right")
    for row in view.rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def print_views(console: Console, views: Iterable[TableView]) -> None:
    """Print each view as a table (never cropped), its notes under it."""
    for view in views:
        if view.headers:
            print_table(console, view_table(view), key_columns=max(1, view.key_columns))
        elif view.title:
            console.print(Text(view.title, style="bold"), soft_wrap=True)
        for note in view.notes:
            console.print(note, markup=False, highlight=False, soft_wrap=True)
        if view.notes:
            console.print()


def print_agent_score(console: Console, score: AgentRunScore,
                      groups: Sequence[StackScores] = ()) -> None:
    """The stack table of an agent run, then one per grouping."""
    print_views(console, score.table_views())
    for grouped in groups:
        view = grouped.table_views()[0]
        print_views(console, [TableView(f"{score.run_id} {view.title}", view.headers,
                                        view.rows, view.notes[:-1], view.key_columns)])


def write_agent_score(out: Path, score: AgentRunScore,
                      groups: Sequence[StackScores] = ()) -> list[Path]:
    """``stack_scores.json`` (the run's stack score, proposals and every case),
    ``stack_scores.csv`` (one row per label), ``stack_cases.csv`` (one row per case) and
    ``stack_scores_by_ATTRIBUTE.csv`` per grouping; returns the paths."""
    data = score.to_dict()
    data["by"] = {g.attribute: {key: s.to_dict() for key, s in g.items()} for g in groups}
    paths = [write_json(out / "stack_scores.json", data),
             write_csv(out / "stack_scores.csv", score.overall.frame()[1]),
             write_csv(out / "stack_cases.csv", score.frame()[1])]
    paths += [write_csv(out / f"stack_scores_by_{g.attribute}.csv", g.frame()[1])
              for g in groups]
    return paths


def write_agent_comparison(out: Path, comparison: AgentComparison) -> list[Path]:
    """``comparison.json``, ``requests.csv`` (one row per matched case) and ``summary.csv``
    (one row of counts and p-values); returns the paths."""
    return [write_json(out / "comparison.json", comparison.to_dict()),
            write_csv(out / "requests.csv", comparison.frame()[1]),
            write_csv(out / "summary.csv", [comparison.summary()])]
