"""Every table of the CLI shows every column and every value in full at 80, 100 and 120 columns.

Each ``print_*`` function is run with a recording wrapper around :func:`print_table`; the
rendered text must contain every header line and every cell of every table it printed, as one
unbroken string (no cropping, no ellipsis, no value split over two lines).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator

import pytest
from rich.console import Console
from rich.table import Table
from rich.text import Text

from authpairs.analysis.compare import compare_records
from authpairs.analysis.compose import compose_all
from authpairs.analysis.contrast import adjust_family, compare_runs, make_contrast
from authpairs.analysis.cost import (
    GridSpec,
    break_even_table,
    condition_from_composition,
    cost_grid,
)
from authpairs.analysis.scoring import score_by, score_records
from authpairs.report import analysis_tables, tables
from authpairs.report.run_list import runs_table
from authpairs.review.outcome import Decision, Dispatch, OutcomeStatus
from authpairs.runs.records import CaseRecord, EffectRecord

WIDTHS = (80, 100, 120)
LONG_PATH = "assigned-window-targeted-withdrawal-of-other-change"
LONG_CLUSTER = "document-class-signature-authority-with-a-long-tail"


def _rec(i: int, label: str, outcome: str, run: str,
         family: str = "revoke_supersede") -> CaseRecord:
    if outcome == "UNAVAILABLE":
        status, decision, reason = OutcomeStatus.UNAVAILABLE, None, "length"
    else:
        status, decision, reason = OutcomeStatus.DECISION, Decision(outcome), None
    executed = outcome == "ALLOW"
    return CaseRecord(
        run_id=run, case_id=f"AC-606abe34dbd9{i:04d}", input_sha256="0" * 64, status=status,
        decision=decision, reason_code=reason,
        dispatch=Dispatch.ALLOW if executed else Dispatch.BLOCK, label=label,
        cluster=f"{LONG_CLUSTER}-{i % 3}", input_tokens=1234567, output_tokens=7654321,
        attributes={"family": family if i % 2 else "delegated_scope", "path": f"{LONG_PATH}-{i}"},
        effect=EffectRecord(executed=executed, verified=executed))


def _runs() -> tuple[list[CaseRecord], list[CaseRecord], list[CaseRecord]]:
    before = [_rec(i, "lawful" if i < 6 else "forbidden", "ALLOW", "A") for i in range(10)]
    after = [_rec(i, "lawful" if i < 6 else "forbidden",
                  ("BLOCK", "UNAVAILABLE", "ALLOW")[i % 3], "B") for i in range(10)]
    third = [_rec(i, "lawful" if i < 6 else "forbidden", "BLOCK", "C") for i in range(10)]
    return before, after, third


def _cells(table: Table) -> Iterator[str]:
    for column in table.columns:
        header = column.header.plain if isinstance(column.header, Text) else str(column.header)
        yield from (line for line in header.split("\n") if line.strip())
        for cell in column.cells:
            yield cell.plain if isinstance(cell, Text) else Text.from_markup(str(cell)).plain


def _check(width: int, monkeypatch: pytest.MonkeyPatch,
           draw: Callable[[Console], None]) -> None:
    seen: list[Table] = []
    real = tables.print_table

    def recording(console: Console, table: Table, key_columns: int = 1) -> None:
        seen.append(table)
        real(console, table, key_columns)

    monkeypatch.setattr(analysis_tables, "print_table", recording)
    monkeypatch.setattr(tables, "print_table", recording)
    console = Console(width=width, file=io.StringIO(), color_system=None)
    draw(console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert seen, "nothing went through print_table"
    assert "…" not in text
    for table in seen:
        for value in _cells(table):
            assert value in text, f"{value!r} cropped at {width} columns:\n{text}"
    assert max(len(line.rstrip()) for line in text.splitlines() if "|" not in line) >= 1


@pytest.mark.parametrize("width", WIDTHS)
def test_score_tables(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    _, after, _ = _runs()

    def draw(console: Console) -> None:
        tables.print_scores(console, "run-4c2dbf43e6b1: 10 cases", {"all": score_records(after)},
                            "cases")
        groups = score_by(after, "family") | {"an_empty_group_of_cases": score_records([])}
        tables.print_scores(console, "by family", groups, "family")

    _check(width, monkeypatch, draw)


@pytest.mark.parametrize("width", WIDTHS)
def test_contrast_and_breakdown_tables(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    before, after, _ = _runs()
    contrast = compare_runs(before, after, before_run="run-aaaaaaaaaaaa",
                            after_run="run-bbbbbbbbbbbb", draws=200, seed=1)

    def draw(console: Console) -> None:
        analysis_tables.print_contrast(console, contrast)
        analysis_tables.print_breakdown(console, "path", contrast.comparison.breakdown("path"))

    _check(width, monkeypatch, draw)


@pytest.mark.parametrize("width", WIDTHS)
def test_family_table(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    before, after, third = _runs()
    family = [
        make_contrast(compare_records(before, after), draws=200, seed=1,
                      name="interface direct -> schema, model qwen-27b, seed 2"),
        make_contrast(compare_records(after, third), draws=200, seed=1,
                      name="interface schema -> structured, model qwen-27b, seed 2")]
    adjust_family(family)

    _check(width, monkeypatch,
           lambda console: analysis_tables.print_family(console, family, "interfaces"))


@pytest.mark.parametrize("width", WIDTHS)
def test_composition_and_cost_tables(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    before, after, third = _runs()
    _, results = compose_all({"direct-qwen-9b": before, "schema-qwen-27b": after,
                              "structured-gpt": third})
    conditions = [condition_from_composition(r) for r in results]

    def draw(console: Console) -> None:
        analysis_tables.print_compositions(console, results)
        analysis_tables.print_break_even(console, break_even_table(conditions))
        analysis_tables.print_grid(console, cost_grid(conditions, GridSpec()))

    _check(width, monkeypatch, draw)


@pytest.mark.parametrize("width", WIDTHS)
def test_runs_table(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [{"run id": f"run-{i:012d}", "reviewer": "guardrail nemo-self-check",
             "interface": "NeMo self_check_input, rails folder 0123456789ab",
             "model": "openai Qwen/Qwen3.5-27B-Instruct-2507-FP8",
             "dataset": "runs/native-user-cedar-folders.jsonl test (first 40)",
             "effects": "enforced" if i else "off", "recorded": "37/40",
             "created (UTC)": "2026-11-30 18:26:09"} for i in range(3)]
    _check(width, monkeypatch,
           lambda console: tables.print_table(console, runs_table(rows, "runs/x.sqlite: 3")))


def test_vertical_layout_keeps_a_very_long_value_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    table = Table(title="t")
    table.add_column("id")
    table.add_column("value")
    table.add_row("AC-1", "x" * 150)
    _check(80, monkeypatch, lambda console: tables.print_table(console, table))


def test_rates_show_numerator_denominator_and_na() -> None:
    assert tables.percent(21, 40) == "52.5% (21/40)"
    assert tables.percent(0, 0) == "n/a" and tables.fraction(0, 0) == "n/a"
    table = tables.score_table("t", {"empty": score_records([])}, "cases")
    console = Console(width=120, file=io.StringIO(), color_system=None)
    console.print(table)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "n/a" in text and "0.0%" not in text
