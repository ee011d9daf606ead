"""The operator table of docs/datasets/language-format.md: every operator has a worked example,
and each example gives the documented result in both evaluators."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from authpairs.tracks.language.expr.ast import (
    Aggregate,
    Arith,
    BoolOp,
    Compare,
    Duration,
    Length,
    Not,
    walk,
)
from authpairs.tracks.language.expr.interpreter import interpret
from authpairs.tracks.language.expr.parser import parse_expression
from authpairs.tracks.language.expr.result import Outcome, TypedFact
from authpairs.tracks.language.expr.sqlite_eval import evaluate_sql

DOC = Path(__file__).resolve().parents[3] / "docs" / "datasets" / "language-format.md"

FACTS = {
    "grant.limit": TypedFact("number", 100),
    "grant.status": TypedFact("string", "active"),
    "grant.ends": TypedFact("timestamp", "2026-05-31T23:59:59Z"),
    "grant.note": TypedFact("null", None),
    "policy.channels": TypedFact("list", ["support_console", "phone_desk"]),
    "approvals": TypedFact("records", [
        {"role": "dba", "ok": True, "at": "2026-06-01T10:00:00Z"},
        {"role": "security", "ok": True, "at": "2026-06-02T10:00:00Z"},
        {"role": "dba", "ok": False}], fields={"role": "string", "ok": "boolean",
                                               "at": "timestamp"}),
    "commitments": TypedFact("records", [
        {"amount": 18000, "status": "open"}, {"amount": 9500, "status": "open"},
        {"amount": 4000, "status": "cancelled"}], fields={"amount": "number",
                                                          "status": "string"}),
}
REQUEST: dict[str, Any] = {"arguments": {"amount": 80},
                           "environment": {"time": "2026-05-04T10:00:00Z"}}
ROW = re.compile(r"^\| `([^`]+)` \| [^|]+ \| `([^`]+)` \| (true|false|unresolved|error) \|$")
PROSE = [("count(a in approvals) == 3", "true"),
         ('all(a.ok for a in approvals where a.role == "security")', "true"),
         ("any(a in approvals where a.at > @2026-06-01T12:00:00Z)", "true"),
         ("all(a in approvals where a.ok)", "false"),
         ("hours(1.5) == minutes(90)", "true"), ("days(1) == 86400", "false"),
         ("days(1) > 86400", "error"),
         ("any(a in approvals where a.ok and a.at >= request.environment.time - days(30) "
          "and a.at <= request.environment.time)", "false")]


def _rows() -> list[tuple[str, str, str]]:
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        match = ROW.match(line)
        if match:
            rows.append((match.group(1), match.group(2), match.group(3)))
    return rows


def test_table_covers_every_operator() -> None:
    ops = {row[0].split("(")[0].split()[0] for row in _rows()}
    assert ops == {"and", "or", "not", "==", "!=", "<", "<=", ">", ">=", "in", "subset", "+",
                   "-", "length", "minutes", "hours", "days", "weeks", "any", "all", "count",
                   "sum", "min", "max"}
    seen: set[str] = set()
    for _, example, _ in _rows():
        for node in walk(parse_expression(example)):
            if isinstance(node, Compare | Arith | BoolOp):
                seen.add(node.op)
            elif isinstance(node, Aggregate):
                seen.add(node.func)
            elif isinstance(node, Not):
                seen.add("not")
            elif isinstance(node, Length):
                seen.add("length")
            elif isinstance(node, Duration):
                seen.add(node.unit)
    assert ops <= seen


@pytest.mark.parametrize(("example", "expected"),
                         [(r[1], r[2]) for r in _rows()] + PROSE)
def test_worked_example(example: str, expected: str) -> None:
    tree = parse_expression(example)
    for evaluator in (interpret, evaluate_sql):
        assert evaluator(tree, FACTS, REQUEST).outcome is Outcome(expected), (evaluator, example)
