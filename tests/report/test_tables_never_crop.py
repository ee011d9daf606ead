"""Every table of the CLI shows every column and every value in full at 80, 100 and 120 columns.

Each table (a :class:`TableView`, as the commands print it) is printed at each width; the
rendered text must contain every header line and every cell, as one unbroken string (no
cropping, no ellipsis, no value split over two lines).
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence

import pytest
from rich.console import Console

from authpairs.analysis.compare import compare_records
from authpairs.analysis.compose import compose_all
from authpairs.analysis.contrast import adjust_family, compare_runs, make_contrast
from authpairs.analysis.cost import (
    GridSpec,
    break_even_table,
    condition_from_composition,
    cost_grid,
)
from authpairs.analysis.notebook import TableView, two_line_header
from authpairs.analysis.scoring import score_by, score_records, score_view
from authpairs.report import tables
from authpairs.report.tables import runs_table
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


def _cells(view: TableView) -> Iterator[str]:
    for header in view.headers:
        yield from (line for line in two_line_header(header).split("\n") if line.strip())
    for row in view.rows:
        yield from row


def _check(width: int, views: Sequence[TableView]) -> None:
    console = Console(width=width, file=io.StringIO(), color_system=None)
    console.print(*views, crop=False)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "…" not in text
    for view in views:
        for value in _cells(view):
            assert value in text, f"{value!r} cropped at {width} columns:\n{text}"
    assert max(len(line.rstrip()) for line in text.splitlines() if "|" not in line) >= 1


@pytest.mark.parametrize("width", WIDTHS)
def test_score_tables(width: int) -> None:
    _, after, _ = _runs()
    groups = score_by(after, "family") | {"an_empty_group_of_cases": score_records([])}
    _check(width, [score_view("run-4c2dbf43e6b1: 10 cases", {"all": score_records(after)},
                              "cases"), score_view("by family", groups, "family")])


@pytest.mark.parametrize("width", WIDTHS)
def test_contrast_and_breakdown_tables(width: int) -> None:
    before, after, _ = _runs()
    contrast = compare_runs(before, after, before_run="run-aaaaaaaaaaaa",
                            after_run="run-bbbbbbbbbbbb", draws=200, seed=1)
    _check(width, [*contrast.table_views(), contrast.comparison.breakdown_view("path")])


@pytest.mark.parametrize("width", WIDTHS)
def test_family_table(width: int) -> None:
    before, after, third = _runs()
    family = [
        make_contrast(compare_records(before, after), draws=200, seed=1,
                      name="interface direct -> schema, model qwen-27b, seed 2"),
        make_contrast(compare_records(after, third), draws=200, seed=1,
                      name="interface schema -> structured, model qwen-27b, seed 2")]
    adjust_family(family)

    _check(width, [tables.family_view(family, "interfaces")])


@pytest.mark.parametrize("width", WIDTHS)
def test_composition_and_cost_tables(width: int) -> None:
    before, after, third = _runs()
    _, results = compose_all({"direct-qwen-9b": before, "schema-qwen-27b": after,
                              "structured-gpt": third})
    conditions = [condition_from_composition(r) for r in results]

    _check(width, [*results.table_views(), tables.break_even_view(break_even_table(conditions)),
                   tables.grid_view(cost_grid(conditions, GridSpec()))])


@pytest.mark.parametrize("width", WIDTHS)
def test_runs_table(width: int) -> None:
    rows = [{"run id": f"run-{i:012d}", "reviewer": "guardrail nemo-self-check",
             "interface": "NeMo self_check_input, rails folder 0123456789ab",
             "model": "openai Qwen/Qwen3.5-27B-Instruct-2507-FP8",
             "dataset": "runs/native-user-cedar-folders.jsonl test (first 40)",
             "effects": "enforced" if i else "off", "recorded": "37/40",
             "created (UTC)": "2026-11-30 18:26:09"} for i in range(3)]
    _check(width, [runs_table(rows, "runs/x.sqlite: 3")])


def test_vertical_layout_keeps_a_very_long_value_whole() -> None:
    _check(80, [TableView("t", ["id", "value"], [["AC-1", "x" * 150]])])


def test_rates_show_numerator_denominator_and_na() -> None:
    from authpairs.analysis.formatting import fraction, percent

    assert percent(21, 40) == "52.5% (21/40)"
    assert percent(0, 0) == "n/a" and fraction(0, 0) == "n/a"
    console = Console(width=120, file=io.StringIO(), color_system=None)
    console.print(score_view("t", {"empty": score_records([])}, "cases"))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "n/a" in text and "0.0%" not in text
