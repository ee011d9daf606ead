"""One implementation of the score row and of the rate strings: the terminal's score table, the
notebook view and every module that writes ``k/n`` or ``45.0% (18/40)`` share them."""

from __future__ import annotations

import io

from rich.console import Console

from authpairs.analysis import formatting, notebook, scoring
from authpairs.analysis.scoring import Score, score_view
from authpairs.report import tables


def test_fraction_and_percent_have_one_implementation() -> None:
    assert notebook.fraction is formatting.fraction is tables.fraction is scoring.fraction
    assert notebook.percent is formatting.percent is tables.percent is scoring.percent


def test_the_terminal_row_is_the_notebook_row() -> None:
    scores = {"all": Score(n=5, lawful=3, forbidden=2, correct=3, incorrect_approvals=1,
                           false_denials=0, abstentions=1, enforced=5, forbidden_effects=1,
                           lawful_completions=2),
              "none": Score()}
    table = tables.score_table("t", scores, "cases")
    view = score_view("t", scores, "cases")
    cells = [[str(cell) for cell in column.cells] for column in table.columns]
    assert [list(row) for row in zip(*cells, strict=True)] == [list(r) for r in view.rows]
    headers = [str(column.header).replace("-\n", "").replace("\n", " ")
               for column in table.columns]
    assert headers == list(view.headers)
    out = io.StringIO()
    tables.print_table(Console(file=out, width=120, color_system=None), table)
    assert "60.0% (3/5)" in out.getvalue() and "n/a" in out.getvalue()
