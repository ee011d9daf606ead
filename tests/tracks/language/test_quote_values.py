"""The number/date agreement of a fact with its quote, and how ``data check`` reports it."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from authpairs.tracks.language.checks import check_language
from authpairs.tracks.language.quote_values import (
    number_problem,
    read_moments,
    read_numbers,
    timestamp_problem,
)
from tests.tracks.language.conftest import FIXTURES, Mutator

FILE = "payments/fixture-refund-ceiling.yaml"


@pytest.mark.parametrize(("text", "numbers"), [
    ("35 tablets", ["35"]),
    ("EUR 14,500.00 paid to date", ["14500.00"]),
    ("ceiling AUD 600.00", ["600.00"]),
    ("Traffic ceiling: 15%", ["15"]),
    ("40h, 5GB and a 35-tablet pack, USD 75.00/month", ["40", "5", "35", "75.00"]),
    ("between 1,000-2,000 units; items 1,2", ["1000", "2000", "1", "2"]),
    ("interrupted at 1,880,112 of 4,947,300 bytes", ["1880112", "4947300"]),
    # digits inside identifiers, versions and dates are not numbers
    ("Orders placed under SBA-560: SO-1190", []),
    ("T-0893 CB-5520 to Sofia Marsh, build v1.2.3 on 10.0.0.1", []),
    ("DA-44817-1: 1 (2026-03-02T10:05:00Z to Granite Title Co.)", ["1"]),
    ("rolled back at 06:52 after an alarm on 4 March 2026", []),
    # number words count only when no digits are written
    ("Production runs allowed: two (one retry allowed).", ["2", "1"]),
    ("Orders placed: none.", ["0"]),
    ("one approval of 3 needed", ["3"]),
    ("no signature produced", []),
])
def test_read_numbers(text: str, numbers: list[str]) -> None:
    assert [str(n.value) for n in read_numbers(text)] == numbers


@pytest.mark.parametrize(("text", "fields"), [
    ("at 2026-05-12T18:55:00Z", [(2026, 5, 12, 18, 55, 0)]),
    ("on 2026-05-12 18:55", [(2026, 5, 12, 18, 55)]),
    ("2026-05-12T20:55+02:00", [(2026, 5, 12, 18, 55)]),
    ("expired on 2026-05-31.", [(2026, 5, 31)]),
    ("until 4 March 2026", [(2026, 3, 4)]),
    ("March 4, 2026 at 10:15 UTC", [(2026, 3, 4, 10, 15)]),
    ("12th Dec 2026, 18:55:30", [(2026, 12, 12, 18, 55, 30)]),
    ("the March 2026 statement", [(2026, 3)]),
    ("22:30 Tariq Aziz: approved", [(22, 30)]),
    ("9:05 pm", [(21, 5)]),
    ("10:15 CET", []),  # another zone: not compared
    ("2026-02-30", []),  # not a real date
    ("you may book 4 hours", []),
])
def test_read_moments(text: str, fields: list[tuple[int, ...]]) -> None:
    assert [m.fields for m in read_moments(text)[0]] == fields


@pytest.mark.parametrize(("value", "quote", "flagged"), [
    (20, "35 tablets", True),
    (35, "35 tablets", False),
    (35.0, "35 tablets", False),
    (14500, "Paid to date: EUR 14,500.00", False),
    (14500.5, "Paid to date: EUR 14,500.00", True),
    (2, "two (one retry allowed)", False),
    (3, "two (one retry allowed)", True),
    (0.15, "Traffic ceiling: 15%", False),
    (-120, "overdrawn by 120", False),
    (1, "Orders placed under SBA-560: SO-1190", False),  # no number written: not checked
    (2026, "signed 2026-03-03T15:00:00Z", False),  # the date's digits are no number
    (100, "Delegation D-17: refunds up to USD 60 each, 100 days", False),
])
def test_number_problem(value: float, quote: str, flagged: bool) -> None:
    problem = number_problem(value, quote)
    assert (problem is not None) is flagged, problem
    if flagged:
        assert repr(quote) in str(problem) and repr(value) in str(problem)


@pytest.mark.parametrize(("value", "quote", "flagged"), [
    ("2026-05-12T18:55:00Z", "at 2026-05-12T18:55:00Z", False),
    ("2026-05-12T18:56:00Z", "at 2026-05-12T18:55:00Z", True),
    ("2026-05-12T18:55:30Z", "at 2026-05-12 18:55", False),  # minute precision written
    ("2026-05-31T23:59:59Z", "expired on 2026-05-31", False),
    ("2026-06-01T00:00:00Z", "expired on 2026-05-31", True),
    ("2026-03-04T23:59:59Z", "until 4 March 2026", False),
    ("2026-03-05T00:00:00Z", "until 4 March 2026", True),
    ("2026-03-31T23:59:59Z", "the March 2026 statement", False),
    ("2026-05-12T18:55:00Z", "2026-05-12T20:55:00+02:00", False),
    ("2026-05-12T22:30:00Z", "22:30 Tariq Aziz", False),
    ("2026-05-12T22:12:00Z", "22:30 Tariq Aziz", True),
    ("2026-05-12T22:12:00Z", "approved by Tariq Aziz", False),  # nothing written: not checked
    ("2026-01-10T00:00:00Z", "dated 2026-01-10, ends 2026-03-31", False),
    ("2026-03-31T23:59:59Z", "dated 2026-01-10, ends 2026-03-31", False),
    ("2026-03-30T23:59:59Z", "dated 2026-01-10, ends 2026-03-31", True),
    ("2026-05-12T10:15:00Z", "10:15 CET on 2026-05-12", False),
])
def test_timestamp_problem(value: str, quote: str, flagged: bool) -> None:
    problem = timestamp_problem(value, quote)
    assert (problem is not None) is flagged, problem
    if flagged:
        assert repr(quote) in str(problem) and value in str(problem)


def test_decimal_values_compare_exactly() -> None:
    assert [n.value for n in read_numbers("USD 0.10")] == [Decimal("0.10")]
    assert number_problem(0.1, "USD 0.10") is None
    assert number_problem(0.1 + 0.2, "USD 0.3") is not None


def _messages(root: Path) -> list[str]:
    return [str(issue) for issue in check_language(root, distribution=False).errors]


def test_data_check_names_file_scenario_fact_and_quote(
        mutate: Callable[[Mutator], Path], good_root: Path) -> None:
    def miscopy(data: dict[str, Any]) -> None:
        data["contexts"][0]["facts"]["grant.ceiling"]["value"] = 150
        data["contexts"][0]["facts"]["grant.ends"]["value"] = "2026-06-30T23:59:59Z"
    mutate(miscopy)
    assert _messages(good_root) == [
        f"{FILE}: contexts[0].facts.grant.ceiling.value: number fact grant.ceiling: its quote "
        "'USD 100' writes 100, not 150 (scenario fixture-refund-ceiling, context c1)",
        f"{FILE}: contexts[0].facts.grant.ends.value: timestamp fact grant.ends: its quote "
        "'2026-05-31T23:59:59Z' writes the dates 2026-05-31T23:59:59Z, not "
        "2026-06-30T23:59:59Z (scenario fixture-refund-ceiling, context c1)"]


def test_data_check_reads_policy_facts(mutate: Callable[[Mutator], Path],
                                       good_root: Path) -> None:
    mutate(lambda d: d["policy_facts"]["refund.manager_threshold"].update(value=5000))
    assert _messages(good_root) == [
        f"{FILE}: policy_facts.refund.manager_threshold.value: number fact "
        "refund.manager_threshold: its quote 'over USD 500' writes 500, not 5000 "
        "(scenario fixture-refund-ceiling)"]


def test_data_check_reads_record_fields(tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "kit"
    shutil.copytree(FIXTURES / "kit", root)
    path = root / "documents" / "amendment-chain-end-date.yaml"
    text = path.read_text(encoding="utf-8")
    wrong = text.replace('ends: "2026-03-31T23:59:59Z", both_signed: true, quote: "dated '
                         '2026-01-10, ends 2026-03-31.', 'ends: "2026-03-30T23:59:59Z", '
                         'both_signed: true, quote: "dated 2026-01-10, ends 2026-03-31.', 1)
    assert wrong != text
    path.write_text(wrong, encoding="utf-8")
    messages = [m for m in _messages(root) if "writes the dates" in m]
    assert len(messages) == 1
    assert messages[0].startswith("documents/amendment-chain-end-date.yaml: contexts[0].facts."
                                  "instruments.value[0].ends: timestamp field ends of record 0")
    assert "not 2026-03-30T23:59:59Z" in messages[0]
