"""Record facts and the aggregates any/all/count/sum/min/max: both evaluators on worked cases,
plus a seeded differential test over random records and random (nested) aggregates."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from authpairs.tracks.language.expr.ast import (
    AGGREGATES,
    Aggregate,
    Arith,
    BoolOp,
    Compare,
    Expr,
    Field,
    Lit,
    Name,
    Not,
    fields_of,
)
from authpairs.tracks.language.expr.interpreter import interpret
from authpairs.tracks.language.expr.parser import parse_expression
from authpairs.tracks.language.expr.result import EvalResult, Outcome, TypedFact
from authpairs.tracks.language.expr.sqlite_eval import evaluate_sql

Evaluator = Callable[[Expr, dict[str, TypedFact], dict[str, Any]], EvalResult]
EVALUATORS: dict[str, Evaluator] = {"interpreter": interpret, "sqlite": evaluate_sql}
T, F, U, E = Outcome.TRUE, Outcome.FALSE, Outcome.UNRESOLVED, Outcome.ERROR

APPROVAL_FIELDS = {"role": "string", "who": "string", "ok": "boolean", "at": "timestamp",
                   "amt": "number"}
FACTS: dict[str, TypedFact] = {
    "ap": TypedFact("records", [
        {"role": "finance", "who": "ana", "ok": True, "at": "2026-03-01T10:00:00Z", "amt": 100},
        {"role": "legal", "who": "bo", "ok": True, "at": "2026-03-02T10:00:00Z", "amt": 250.5},
        {"role": "finance", "who": "cy", "ok": False, "at": "2026-03-03T10:00:00Z", "amt": 50},
        {"role": "legal", "who": "dee", "ok": None},  # ok is an explicit null; at, amt absent
    ], fields=APPROVAL_FIELDS),
    "none": TypedFact("records", [], fields={"amt": "number"}),
    "ones": TypedFact("records", [{"n": 1}, {"n": 1.0}, {"n": 2}], fields={"n": "number"}),
    "lim": TypedFact("number", 500),
    "tags": TypedFact("list", ["a", "b"]),
    "bad.type": TypedFact("records", [{"amt": "12"}], fields={"amt": "number"}),
    "bad.ts": TypedFact("records", [{"at": "2026-03-01 10:00"}], fields={"at": "timestamp"}),
    "bad.undeclared": TypedFact("records", [{"x": 1}], fields={"amt": "number"}),
    "bad.shape": TypedFact("records", ["not a mapping"], fields={}),
}
REQUEST: dict[str, Any] = {"subject": "cy", "arguments": {"amount": 300}}

CASES: list[tuple[str, Outcome]] = [
    # any / all, with and without a value, over no records
    ('any(a in ap where a.role == "legal")', T), ('any(a in ap where a.role == "hr")', F),
    ('all(a in ap where a.role in ["finance", "legal"])', T), ("all(a in ap where a.ok)", F),
    ("any(a in ap where a.ok == true)", T), ("any(a in ap)", T), ("all(a in ap)", T),
    ('any(a.ok for a in ap where a.role == "finance")', T),
    ('all(a.ok for a in ap where a.role == "finance")', F),
    ('all(a.ok == true for a in ap where a.who != "dee")', F),
    ("any(a in none)", F), ("all(a in none where a.amt > 1)", T),
    # Kleene: a deciding record wins over unresolved (absent field) and error records
    ("any(a in ap where a.amt > 200)", T), ("all(a in ap where a.amt > 10)", U),
    ("all(a in ap where a.amt > 60)", F), ("any(a in ap where a.amt > 1000)", U),
    ('any(a in ap where a.role == "legal" or a.role < 3)', T),
    ('all(a in ap where a.role < 3)', E), ("any(a in ap where a.amt)", E),
    # count: passing records, distinct values, strictness
    ("count(a in ap where a.ok == true) == 2", T), ("count(a in ap) == 4", T),
    ("count(a.role for a in ap where a.ok == true) == 2", T), ("count(a.role for a in ap) == 2", T),
    ('count(a.role for a in ap where a.role == "finance") == 1', T),
    ("count(a.ok for a in ap) == 3", T), ("count(a in none) == 0", T),
    ("count(a.n for a in ones) == 2", T), ("count(a in ap where a.amt > 60) == 1", U),
    ("count(a in ap where a.amt) == 1", E), ("count(a.at for a in ap) == 3", U),
    ("count(tags for a in ap) == 1", E),
    # sum / min / max
    ('sum(a.amt for a in ap where a.role == "finance") == 150', T),
    ("sum(a.amt for a in ap where a.ok == true) + lim <= 850.5", T),
    ("sum(a.amt for a in ap where a.ok == true) + request.arguments.amount > 650", T),
    ("sum(a.amt for a in ap) > 0", U), ("sum(a.amt for a in none) == 0", T),
    ("sum(a.role for a in ap) > 0", E), ("sum(a.n for a in ones) == 4", T),
    ("max(a.at for a in ap where a.ok == true) == @2026-03-02T10:00:00Z", T),
    ("min(a.amt for a in ap where a.ok != null) == 50", T),
    ("min(a.at for a in ap where a.ok == false) < @2026-03-04T00:00:00Z", T),
    ("max(a.amt for a in none) == null", T), ("min(a.amt for a in none) < 3", E),
    ("max(a.role for a in ap) == 1", E), ("max(a.ok for a in ap where a.ok != null) == 1", E),
    # nested aggregates, inner scopes see outer variables
    ("any(a in ap where a.ok == true and a.at == max(b.at for b in ap where b.ok == true) "
     "and a.amt == 250.5)", T),
    ("all(a in ap where a.ok != true or "
     "count(b in ap where b.role == a.role and b.ok == true) == 1)", T),
    ("any(a in ap where count(b in ap where b.role == a.role) == 3)", F),
    ("any(a in ap where a.who == request.subject and any(b in ap where b.at > a.at))", U),
    ("any(a in ap where a.who == request.subject and any(b in ap where b.at < a.at))", T),
    # records only live inside aggregates; sources must be records; bad records are errors
    ("ap == ap", E), ("ap != 1", E), ("length(ap) == 4", E), ("ap", E), ('"a" in ap', E),
    ("not ap", E), ("ap and true", E), ("ap + 1 == 1", E),
    ("any(a in tags)", E), ("count(a in lim) == 1", E), ("any(a in missing.r)", U),
    ("sum(a.amt for a in missing.r) == 0", U), ("any(a in bad.type)", E),
    ("any(a in bad.ts)", E), ("count(a in bad.undeclared) == 1", E), ("any(a in bad.shape)", E),
    ("false and any(a in bad.type)", F), ("any(a in bad.type) or true", T),
]


@pytest.mark.parametrize("evaluator", list(EVALUATORS))
@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_record_semantics(evaluator: str, text: str, expected: Outcome) -> None:
    result = EVALUATORS[evaluator](parse_expression(text), FACTS, REQUEST)
    assert result.outcome is expected, result.detail


@pytest.mark.parametrize("evaluator", list(EVALUATORS))
def test_unresolved_names_a_missing_record_field(evaluator: str) -> None:
    result = EVALUATORS[evaluator](parse_expression("sum(a.amt for a in ap) > 0"), FACTS, {})
    assert result.outcome is U
    assert "missing: " in result.detail


def test_parse_shapes() -> None:
    tree = parse_expression('sum(c.amount for c in prior where c.status == "open") <= lim')
    assert tree == Compare("<=", Aggregate(
        "sum", "c", Name("prior"), Compare("==", Field("c", "status"), Lit("string", "open")),
        Field("c", "amount")), Name("lim"))
    assert fields_of(tree) == [(Name("prior"), "status"), (Name("prior"), "amount")]


# ---- differential test --------------------------------------------------------------------

_FIELDS = {"r": "string", "n": "number", "b": "boolean", "t": "timestamp"}
_VALUES: dict[str, list[Any]] = {
    "r": ["a", "b", "c"], "n": [0, 1, 1.0, 2.5, -1], "b": [True, False],
    "t": ["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"],
}
_OUTER: list[Expr] = [Name("k.num"), Name("k.str"), Name("missing.x"), Lit("number", 1),
                      Lit("string", "a"), Lit("boolean", True), Lit("null", None),
                      Lit("timestamp", "2026-01-02T00:00:00Z")]
_SOURCES: list[Expr] = [Name("rs.a"), Name("rs.b"), Name("rs.empty"), Name("missing.r"),
                        Name("k.num"), Name("rs.bad")]
_CMP = ("==", "!=", "<", "<=", ">", ">=")


def _record(rng: random.Random) -> dict[str, Any]:
    return {name: (None if rng.random() < 0.1 else rng.choice(_VALUES[name]))
            for name in _FIELDS if rng.random() < 0.85}


def _facts(rng: random.Random) -> dict[str, TypedFact]:
    return {
        "rs.a": TypedFact("records", [_record(rng) for _ in range(rng.randrange(5))],
                          fields=_FIELDS),
        "rs.b": TypedFact("records", [_record(rng) for _ in range(rng.randrange(4))],
                          fields=_FIELDS),
        "rs.empty": TypedFact("records", [], fields=_FIELDS),
        "rs.bad": TypedFact("records", [{"n": "x"}], fields=_FIELDS),
        "k.num": TypedFact("number", rng.choice([0, 1, 2.5])),
        "k.str": TypedFact("string", rng.choice(["a", "b"])),
    }


def _expr(rng: random.Random, depth: int, scope: list[str]) -> Expr:
    if depth == 0 or rng.random() < 0.25:
        if scope and rng.random() < 0.65:
            return Field(rng.choice(scope), rng.choice([*_FIELDS, "zz"]))
        return rng.choice(_OUTER)
    kind = rng.randrange(7)
    if kind == 0:
        return Not(_expr(rng, depth - 1, scope))
    if kind == 1:
        return BoolOp(rng.choice(("and", "or")), _expr(rng, depth - 1, scope),
                      _expr(rng, depth - 1, scope))
    if kind == 2:
        return Arith(rng.choice(("+", "-")), _expr(rng, depth - 1, scope),
                     _expr(rng, depth - 1, scope))
    if kind in (3, 4):
        return Compare(rng.choice(_CMP), _expr(rng, depth - 1, scope),  # type: ignore[arg-type]
                       _expr(rng, depth - 1, scope))
    func = rng.choice(AGGREGATES)
    var = f"v{len(scope)}"
    inner = [*scope, var]
    where = _expr(rng, depth - 1, inner) if rng.random() < 0.8 else None
    needs_value = func in ("sum", "min", "max")
    value = _expr(rng, depth - 1, inner) if needs_value or rng.random() < 0.4 else None
    return Aggregate(func, var, rng.choice(_SOURCES), where, value)  # type: ignore[arg-type]


@pytest.mark.slow  # several seconds: the slow tier (.ci/run) runs it
def test_differential_random_aggregates() -> None:
    rng = random.Random(14)
    seen: dict[str, set[Outcome]] = {func: set() for func in AGGREGATES}
    for _ in range(1200):
        facts = _facts(rng)
        func = rng.choice(AGGREGATES)
        var = "v0"
        where = _expr(rng, 3, [var]) if rng.random() < 0.85 else None
        value = _expr(rng, 2, [var]) if func in ("sum", "min", "max") or rng.random() < 0.4 \
            else None
        agg = Aggregate(func, var, rng.choice(_SOURCES[:4]), where, value)  # type: ignore[arg-type]
        expr: Expr = agg if func in ("any", "all") else Compare(
            rng.choice(_CMP), agg, rng.choice(_OUTER))  # type: ignore[arg-type]
        if rng.random() < 0.3:
            expr = BoolOp(rng.choice(("and", "or")), expr, _expr(rng, 2, []))
        first, second = interpret(expr, facts, {}), evaluate_sql(expr, facts, {})
        assert first.outcome is second.outcome, (expr, facts, first, second)
        seen[func].add(first.outcome)
    for func, outcomes in seen.items():
        assert outcomes == {T, F, U, E}, (func, outcomes)


def test_differential_random_nested_expressions() -> None:
    rng = random.Random(1402)
    seen: set[Outcome] = set()
    for _ in range(600):
        facts = _facts(rng)
        expr = _expr(rng, 4, [])
        first, second = interpret(expr, facts, {}), evaluate_sql(expr, facts, {})
        assert first.outcome is second.outcome, (expr, facts, first, second)
        seen.add(first.outcome)
    assert seen == {T, F, U, E}
