"""Titles and footnotes of the terminal tables wrap at the console's width: no line runs past it,
and every word is still there (a word longer than the width is folded, not cut)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from authpairs.analysis.notebook import TableView
from authpairs.analysis.scoring import USABLE_CORRECTNESS_NOTE, Score, score_view

LONG_TITLE = ("records/a-rather-long-folder-name/authpairs.sqlite::run-0123456789ab: 160 of 160 "
              "cases, reviewer schema / openai Qwen3-30B-A3B-Instruct-2507 on two endpoints, "
              "language test split")


def console(width: int) -> tuple[Console, io.StringIO]:
    """A console writing to a buffer at ``width`` columns."""
    buffer = io.StringIO()
    return Console(file=buffer, width=width, color_system=None), buffer


def words_in_order(text: str, expected: str) -> bool:
    """Whether the rendered ``text`` holds every word of ``expected``, in order (a word folded
    over two lines counts once joined)."""
    joined = "".join(text.split())
    return "".join(expected.split()) in joined


@pytest.mark.parametrize("width", [40, 80, 120])
def test_a_long_title_wraps_at_the_width(width: int) -> None:
    assert len(LONG_TITLE) > 150
    out, buffer = console(width)
    out.print(TableView(LONG_TITLE, ["group", "n"], [["all", "3"]]), crop=False)
    text = buffer.getvalue()
    lines = text.splitlines()
    assert all(len(line) <= width for line in lines), text
    title_lines = text.split("group", 1)[0].strip().splitlines()
    assert len(title_lines) >= 2, text  # wrapped, not one 150-character line
    assert words_in_order(text, LONG_TITLE)


def test_a_word_longer_than_the_width_is_folded_not_cut() -> None:
    word = "x" * 95
    out, buffer = console(40)
    out.print(TableView("", [], [], [f"see {word} [and] more"]), crop=False)  # a table's note
    text = buffer.getvalue()
    assert all(len(line) <= 40 for line in text.splitlines())
    assert words_in_order(text, f"see {word} [and] more")  # '[and]' is not read as markup


def test_the_score_footnotes_wrap_at_80_columns() -> None:
    out, buffer = console(80)
    score = Score(n=2, correct=1, lawful=1, forbidden=1, incorrect_approvals=1, unavailable=0,
                  unavailable_by_reason={"length": 0, "invalid_json_with_a_long_reason": 0,
                                         "another_long_reason_code_here": 0,
                                         "yet_another_reason_code": 0})
    out.print(score_view(LONG_TITLE, {"all": score}, "cases"), crop=False)
    text = buffer.getvalue()
    assert len(USABLE_CORRECTNESS_NOTE) > 80
    assert all(len(line) <= 80 for line in text.splitlines()), text
    assert words_in_order(text, USABLE_CORRECTNESS_NOTE)
    assert words_in_order(text, LONG_TITLE)
