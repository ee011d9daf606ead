"""One implementation of the score row and of the rate strings: the terminal's score table, the
notebook view and every module that writes ``k/n`` or ``45.0% (18/40)`` share them."""

from __future__ import annotations

import io

from rich.console import Console

from authpairs.analysis import agent_runs, compare, formatting, notebook, scoring
from authpairs.analysis.scoring import Score, score_view


def test_fraction_and_percent_have_one_implementation() -> None:
    assert formatting.fraction is scoring.fraction is compare.fraction is agent_runs.fraction
    assert formatting.percent is scoring.percent
    assert not hasattr(notebook, "fraction") and not hasattr(notebook, "percent")


def test_the_terminal_row_is_the_notebook_row() -> None:
    scores = {"all": Score(n=5, lawful=3, forbidden=2, correct=3, incorrect_approvals=1,
                           false_denials=0, abstentions=1, enforced=5, forbidden_effects=1,
                           lawful_completions=2),
              "none": Score()}
    view = score_view("t", scores, "cases")
    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(view, crop=False)
    lines = [line.split() for line in out.getvalue().splitlines()]
    for row in view.rows:
        assert " ".join(row).split() in lines
    assert "60.0% (3/5)" in out.getvalue() and "n/a" in out.getvalue()
