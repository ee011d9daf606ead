"""Both evaluators (interpreter and SQLite) on every operator and edge case, plus a seeded
differential test over thousands of random expressions."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from authpairs.tracks.language.expr.ast import (
    Arith,
    BoolOp,
    Compare,
    Expr,
    Length,
    ListLit,
    Lit,
    Name,
    Not,
)
from authpairs.tracks.language.expr.interpreter import interpret
from authpairs.tracks.language.expr.parser import parse_expression
from authpairs.tracks.language.expr.result import EvalResult, Outcome, TypedFact
from authpairs.tracks.language.expr.sqlite_eval import evaluate_sql

Evaluator = Callable[[Expr, dict[str, TypedFact], dict[str, Any]], EvalResult]
EVALUATORS: dict[str, Evaluator] = {"interpreter": interpret, "sqlite": evaluate_sql}

T, F, U, E = Outcome.TRUE, Outcome.FALSE, Outcome.UNRESOLVED, Outcome.ERROR

FACTS: dict[str, TypedFact] = {
    "n.five": TypedFact("number", 5),
    "n.half": TypedFact("number", 0.5),
    "n.five_f": TypedFact("number", 5.0),
    "s.x": TypedFact("string", "x"),
    "s.ts_like": TypedFact("string", "2026-03-04T10:00:00Z"),
    "b.yes": TypedFact("boolean", True),
    "b.no": TypedFact("boolean", False),
    "z.none": TypedFact("null", None),
    "z.none2": TypedFact("null", None),
    "t.early": TypedFact("timestamp", "2026-03-04T10:00:00Z"),
    "t.late": TypedFact("timestamp", "2026-03-05T00:00:00Z"),
    "l.ab1": TypedFact("list", ["a", "b", 1]),
    "l.ab": TypedFact("list", ["a", "b"]),
    "l.empty": TypedFact("list", []),
    "l.nums": TypedFact("list", [1, 2.5]),
    "bad.ts": TypedFact("timestamp", "2026-03-04 10:00"),
    "bad.num": TypedFact("number", "12"),
    "bad.list": TypedFact("list", [True]),
}
REQUEST: dict[str, Any] = {
    "subject": "agent for Leah",
    "action": "refund",
    "resource": "order ORD-1",
    "purpose": "refund",
    "arguments": {"amount": 75.0, "count": 3, "tags": ["a"], "flag": True, "nothing": None,
                  "when": "2026-03-04T12:00:00Z", "nested": {"deep": "v"}, "obj": {"k": 1}},
    "environment": {"time": "2026-03-04T10:15:00Z", "channel": "console",
                    "bad_time": "2026-02-30T10:00:00Z"},
}

CASES: list[tuple[str, Outcome]] = [
    # equality and inequality, across types
    ("n.five == 5", T), ("n.five == n.five_f", T), ("n.five != 5", F), ("n.half == 0.5", T),
    ('s.x == "x"', T), ("s.x == 'x'", T), ('s.x != "y"', T), ("b.yes == true", T),
    ("b.no == false", T), ("b.yes == 1", F), ('n.five == "5"', F), ("s.x == n.five", F),
    ("z.none == null", T), ("z.none == z.none2", T), ('z.none == "x"', F), ("z.none != 0", T),
    ("null == null", T), ("s.ts_like == t.early", F),
    ("t.early == @2026-03-04T10:00:00Z", T), ("t.early != t.late", T),
    ('l.ab == ["a", "b"]', T), ('l.ab == ["b", "a"]', F), ("l.ab == l.ab1", F),
    ("l.nums == [1.0, 2.5]", T), ('l.ab1 == ["a", "b", "1"]', F), ("l.empty == []", T),
    # ordered comparisons
    ("n.five < 6", T), ("n.five <= 5", T), ("n.five > 5", F), ("n.five >= 5.0", T),
    ("n.half < n.five", T), ("t.early < t.late", T), ("t.late <= t.early", F),
    ("t.early >= @2026-03-04T10:00:00Z", T), ("t.late > @2026-03-04T23:59:59Z", T),
    ("request.environment.time > t.early", T), ("request.arguments.when < t.late", T),
    ('s.x < "y"', E), ("n.five < t.late", E), ("z.none < 1", E), ("1 >= z.none", E),
    ("b.yes > b.no", E), ("l.ab < l.ab1", E), ("s.ts_like < t.late", E),
    # membership and subset
    ('"a" in l.ab', T), ('"c" in l.ab', F), ("1 in l.ab1", T), ("1.0 in l.ab1", T),
    ('"1" in l.ab1', F), ("2.5 in l.nums", T), ("z.none in l.ab", F), ("t.early in l.ab", F),
    ('"a" in l.empty', F), ('"a" in s.x', E), ("l.ab in l.ab1", E), ("n.five in 5", E),
    ("l.ab subset l.ab1", T), ("l.ab1 subset l.ab", F), ("l.empty subset l.ab", T),
    ('["b", "a", "a"] subset l.ab', T), ("l.nums subset [2.5, 1]", T),
    ('["1"] subset l.nums', F), ("request.arguments.tags subset l.ab", T),
    ("s.x subset l.ab", E), ("l.ab subset s.x", E),
    # arithmetic and length
    ("n.five + 1 == 6", T), ("n.five - 0.5 == 4.5", T), ("n.five - 10 < 0", T),
    ("1 + 2 - 3 == 0", T), ("request.arguments.amount + n.five == 80", T),
    ('s.x + 1 == 2', E), ("t.early - 1 < t.late", E), ("z.none + 1 == 1", E),
    ("length(l.ab) == 2", T), ("length(l.empty) == 0", T), ('length(["a"]) + 1 == 2', T),
    ("length(s.x) == 1", E), ("length(z.none) == 0", E),
    # logic: Kleene with unresolved, error absorption by a dominating side
    ("b.yes and b.yes", T), ("b.yes and b.no", F), ("b.no or b.yes", T), ("b.no or b.no", F),
    ("not b.no", T), ("not not b.yes", T),
    ("missing.x and b.no", F), ("b.no and missing.x", F), ("missing.x and b.yes", U),
    ("missing.x or b.yes", T), ("b.yes or missing.x", T), ("missing.x or b.no", U),
    ("not missing.x", U), ("missing.x == 1", U), ("missing.x < 1", U), ('missing.x < "a"', U),
    ("missing.x in l.ab", U), ("length(missing.x) == 1", U), ("missing.x + 1 == 2", U),
    ("missing.x == null", U), ("missing.x != missing.y", U),
    ("b.no and (1 < s.x)", F), ("(1 < s.x) or b.yes", T), ("b.yes and (1 < s.x)", E),
    ("(1 < s.x) or b.no", E), ("missing.x and (1 < s.x)", E), ("(1 < s.x) and missing.x", E),
    ("missing.x == (1 < s.x)", E), ("not (1 < s.x)", E),
    ("n.five and b.yes", E), ("b.no and n.five", F), ("n.five or b.yes", T), ("not s.x", E),
    ("s.x and missing.x", E),
    # explicit null versus missing
    ("z.none == null or z.none < 3", T), ("z.none != null and z.none < 3", F),
    ("missing.x == null or missing.x < 3", U),
    # request fields
    ('request.subject == "agent for Leah"', T), ('request.action == "refund"', T),
    ('request.resource == "order ORD-1"', T), ('request.purpose == "refund"', T),
    ("request.arguments.amount == 75", T), ("request.arguments.count >= 3", T),
    ("request.arguments.flag", T), ("request.arguments.nothing == null", T),
    ('request.arguments.nested.deep == "v"', T), ("request.arguments.absent == 1", U),
    ("request.environment.absent.more == 1", U), ('request.environment.channel == "console"', T),
    ('request.environment.bad_time == "2026-02-30T10:00:00Z"', T),  # not a real date: a string
    ("request.arguments.obj == 1", E), ("request.arguments == 1", E),
    # malformed facts are errors, not unresolved
    ("bad.ts < t.late", E), ("bad.num == 12", E), ("length(bad.list) == 1", E),
    # the top level must be boolean
    ("n.five", E), ("n.five + 1", E), ("l.ab", E), ("missing.x", U), ("b.yes", T),
]


@pytest.mark.parametrize("evaluator", list(EVALUATORS))
@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_operator_semantics(evaluator: str, text: str, expected: Outcome) -> None:
    result = EVALUATORS[evaluator](parse_expression(text), FACTS, REQUEST)
    assert result.outcome is expected, result.detail


@pytest.mark.parametrize("evaluator", list(EVALUATORS))
def test_unresolved_names_the_missing_inputs(evaluator: str) -> None:
    result = EVALUATORS[evaluator](parse_expression("grant.limit >= 1 and b.yes"), FACTS, REQUEST)
    assert result.outcome is U
    assert "grant.limit" in result.detail


@pytest.mark.parametrize("evaluator", list(EVALUATORS))
def test_errors_carry_a_message(evaluator: str) -> None:
    result = EVALUATORS[evaluator](parse_expression('s.x < "y"'), FACTS, REQUEST)
    assert result.outcome is E
    assert "order" in result.detail


@pytest.mark.parametrize("evaluator", list(EVALUATORS))
def test_deep_expression_is_fast(evaluator: str) -> None:
    text = " and ".join(f"(n.five + {i} > {i} or missing.x{i} == 1)" for i in range(40))
    assert EVALUATORS[evaluator](parse_expression(text), FACTS, REQUEST).outcome is T


# ---- differential test: random well-formed and ill-typed expressions -----------------------

_LEAVES: list[Expr] = [
    *(Name(name) for name in FACTS if not name.startswith("bad.")),
    Name("missing.x"), Name("request.arguments.amount"), Name("request.environment.time"),
    Name("request.arguments.tags"), Name("request.arguments.flag"),
    Lit("number", 5), Lit("number", 0.5), Lit("number", -2), Lit("string", "a"),
    Lit("string", "x"), Lit("boolean", True), Lit("boolean", False), Lit("null", None),
    Lit("timestamp", "2026-03-04T10:00:00Z"), ListLit((Lit("string", "a"), Lit("number", 1))),
    ListLit(()),
]
_COMPARE_OPS = ("==", "!=", "<", "<=", ">", ">=", "in", "subset")


def _random_expr(rng: random.Random, depth: int) -> Expr:
    if depth == 0 or rng.random() < 0.2:
        return rng.choice(_LEAVES)
    choice = rng.randrange(6)
    if choice == 0:
        return Not(_random_expr(rng, depth - 1))
    if choice == 1:
        return BoolOp(rng.choice(("and", "or")), _random_expr(rng, depth - 1),
                      _random_expr(rng, depth - 1))
    if choice == 2:
        return Arith(rng.choice(("+", "-")), _random_expr(rng, depth - 1),
                     _random_expr(rng, depth - 1))
    if choice == 3:
        return Length(_random_expr(rng, depth - 1))
    return Compare(rng.choice(_COMPARE_OPS), _random_expr(rng, depth - 1),  # type: ignore[arg-type]
                   _random_expr(rng, depth - 1))


def test_differential_random_expressions() -> None:
    rng = random.Random(20260304)
    seen: set[Outcome] = set()
    for _ in range(1500):
        expr = _random_expr(rng, 4)
        facts = {k: v for k, v in FACTS.items() if rng.random() < 0.85}
        first, second = interpret(expr, facts, REQUEST), evaluate_sql(expr, facts, REQUEST)
        assert first.outcome is second.outcome, (expr, first, second)
        seen.add(first.outcome)
    assert seen == {T, F, U, E}


def test_sqlite_evaluator_is_separate_code() -> None:
    """Evaluator 2 shares only the parser/AST and the result type with evaluator 1."""
    import ast as python_ast
    import inspect

    from authpairs.tracks.language.expr import sqlite_eval

    package = "authpairs.tracks.language.expr"
    tree = python_ast.parse(inspect.getsource(sqlite_eval))
    imported: set[str] = set()
    for node in python_ast.walk(tree):
        if isinstance(node, python_ast.ImportFrom) and node.module:
            # ``from <package> import <module>`` imports that module of the package
            imported |= ({f"{package}.{alias.name}" for alias in node.names}
                         if node.module == package else {node.module})
    assert f"{package}.interpreter" not in imported
    assert {m for m in imported if m.startswith("authpairs")} == {
        f"{package}.ast", f"{package}.result"}


_POOL: list[TypedFact] = [
    TypedFact("number", 0), TypedFact("number", -1), TypedFact("number", 2.5),
    TypedFact("number", 100), TypedFact("string", ""), TypedFact("string", "a"),
    TypedFact("string", "1"), TypedFact("boolean", True), TypedFact("boolean", False),
    TypedFact("null", None), TypedFact("timestamp", "2026-01-01T00:00:00Z"),
    TypedFact("timestamp", "2026-01-01T00:00:01Z"), TypedFact("list", []),
    TypedFact("list", ["a", "1"]), TypedFact("list", [1, 0, -1]), TypedFact("list", ["a", 1]),
]


def test_differential_random_fact_types() -> None:
    """Same names, randomly typed values: both evaluators agree on every outcome."""
    rng = random.Random(7)
    names = [Name(f"f.v{i}") for i in range(5)]
    leaves: list[Expr] = [*names, Lit("number", 1), Lit("string", "a"), Lit("null", None),
                          Lit("boolean", True), ListLit((Lit("string", "a"),))]
    seen: set[Outcome] = set()
    for _ in range(1500):
        def pick(depth: int) -> Expr:
            if depth == 0 or rng.random() < 0.25:
                return rng.choice(leaves)
            kind = rng.randrange(5)
            if kind == 0:
                return Not(pick(depth - 1))
            if kind == 1:
                return BoolOp(rng.choice(("and", "or")), pick(depth - 1), pick(depth - 1))
            if kind == 2:
                return Arith(rng.choice(("+", "-")), pick(depth - 1), pick(depth - 1))
            op = rng.choice(_COMPARE_OPS)
            return Compare(op, pick(depth - 1), pick(depth - 1))  # type: ignore[arg-type]
        expr = pick(3)
        facts = {n.path: rng.choice(_POOL) for n in names if rng.random() < 0.9}
        first, second = interpret(expr, facts, {}), evaluate_sql(expr, facts, {})
        assert first.outcome is second.outcome, (expr, facts, first, second)
        seen.add(first.outcome)
    assert seen == {T, F, U, E}
