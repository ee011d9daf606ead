"""Durations and time arithmetic (``time - days(30)``) in both evaluators: operator cases,
parse shapes and errors, and a hypothesis differential test that the evaluators agree."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from authpairs.tracks.language.expr.ast import (
    Arith,
    BoolOp,
    Compare,
    Duration,
    Expr,
    Lit,
    Name,
    Not,
)
from authpairs.tracks.language.expr.interpreter import interpret
from authpairs.tracks.language.expr.parser import ExpressionSyntaxError, parse_expression
from authpairs.tracks.language.expr.result import (
    MAX_DURATION_SECONDS,
    EvalResult,
    Outcome,
    TypedFact,
)
from authpairs.tracks.language.expr.sqlite_eval import evaluate_sql

Evaluator = Callable[[Expr, dict[str, TypedFact], dict[str, Any]], EvalResult]
EVALUATORS: dict[str, Evaluator] = {"interpreter": interpret, "sqlite": evaluate_sql}
T, F, U, E = Outcome.TRUE, Outcome.FALSE, Outcome.UNRESOLVED, Outcome.ERROR

FACTS: dict[str, TypedFact] = {
    "grant.issued": TypedFact("timestamp", "2026-05-01T09:00:00Z"),
    "grant.ends": TypedFact("timestamp", "2026-05-31T23:59:59Z"),
    "policy.window_days": TypedFact("number", 30),
    "policy.grace_hours": TypedFact("number", 1.5),
    "s.x": TypedFact("string", "x"),
    "z.none": TypedFact("null", None),
    "b.yes": TypedFact("boolean", True),
    "first": TypedFact("timestamp", "0001-01-01T00:00:00Z"),
    "last": TypedFact("timestamp", "9999-12-31T23:59:59Z"),
    "approvals": TypedFact("records", [
        {"role": "dba", "at": "2026-05-02T10:00:00Z"},
        {"role": "security", "at": "2026-05-03T16:30:00Z"}],
        fields={"role": "string", "at": "timestamp"}),
}
REQUEST: dict[str, Any] = {"environment": {"time": "2026-05-31T10:00:00Z"},
                           "arguments": {"start": "2026-06-01T08:00:00Z",
                                         "end": "2026-06-01T14:00:00Z", "hours": 6}}

CASES: list[tuple[str, Outcome]] = [
    # the units, fractions and negatives
    ("days(1) == hours(24)", T), ("weeks(1) == days(7)", T), ("hours(1) == minutes(60)", T),
    ("hours(1.5) == minutes(90)", T), ("days(-1) < days(0)", T), ("minutes(0.5) > minutes(0)", T),
    ("days(policy.window_days) == weeks(4) + days(2)", T),
    ("hours(policy.grace_hours) == minutes(90)", T),
    # a time plus or minus a duration is a time
    ("request.environment.time - days(30) == @2026-05-01T10:00:00Z", T),
    ("grant.issued >= request.environment.time - days(30)", F),
    ("grant.issued >= request.environment.time - days(policy.window_days) - hours(1)", T),
    ("grant.issued + days(30) < request.environment.time", T),
    ("grant.issued + days(30) + hours(1) < request.environment.time", F),
    ("days(30) + grant.issued == grant.issued + days(30)", T),
    ("grant.ends + minutes(1) > grant.ends", T),
    ("request.environment.time + weeks(1) - days(7) == request.environment.time", T),
    # durations combine; a time minus a time is the duration between them
    ("days(1) + hours(2) - minutes(120) == days(1)", T),
    ("request.arguments.end - request.arguments.start == hours(6)", T),
    ("request.arguments.end - request.arguments.start <= hours(request.arguments.hours)", T),
    ("request.arguments.end - request.arguments.start > hours(4)", T),
    ("grant.issued - grant.ends < days(0)", T),
    ("grant.ends - grant.issued > days(30) + hours(14) + minutes(59)", T),
    ("grant.ends - grant.issued < days(30) + hours(15)", T),
    # durations inside aggregates
    ("max(a.at for a in approvals) - min(a.at for a in approvals) <= days(2)", T),
    ("all(a in approvals where a.at >= request.environment.time - days(30))", T),
    ("count(a in approvals where a.at > grant.issued + days(1) + hours(12))", E),
    ("count(a in approvals where a.at > grant.issued + days(1) + hours(12)) == 1", T),
    ("max(a.at - grant.issued for a in approvals) == days(2) + hours(7) + minutes(30)", T),
    ("count(a.at - a.at for a in approvals) == 1", T),
    ("sum(a.at - grant.issued for a in approvals) > days(1)", E),
    # comparisons of durations are typed
    ("days(1) == 86400", F), ("days(1) != 86400", T), ("days(1) > 86399", E),
    ("days(1) < grant.issued", E), ('days(1) in [86400, "a"]', F),
    # errors: wrong operand kinds, and the ranges
    ("grant.issued + grant.ends > grant.ends", E), ("grant.issued + 1 > grant.issued", E),
    ("days(1) + 1 > days(1)", E), ("1 - days(1) < days(1)", E),
    ("days(1) - grant.issued < grant.issued", E), ('days(s.x) > days(1)', E),
    ("days(z.none) > days(1)", E), ("days(b.yes) > days(1)", E),
    ("days(grant.issued) > days(1)", E),
    ("length(days(1)) == 1", E), ("not days(1)", E), ("days(1)", E),
    ("request.environment.time - days(1)", E),
    ("days(3652500) > days(1)", T), ("days(3652501) > days(1)", E),
    ("last - first > days(3652000)", T),
    ("first - days(1) < first", E), ("last + minutes(1) > last", E),
    ("last + days(0) == last", T), ("first - minutes(0) == first", T),
    ("days(3652500) + days(1) > days(1)", E),
    # the exact edges of both ranges, to the second
    ("minutes(5259600000) == days(3652500)", T), ("minutes(5259600001) > days(1)", E),
    ("days(3652500) + (@2026-01-01T00:00:01Z - @2026-01-01T00:00:00Z) > days(1)", E),
    ("days(3652500) - (@2026-01-01T00:00:01Z - @2026-01-01T00:00:00Z) > days(1)", T),
    ("first + (@2026-01-01T00:00:00Z - @2026-01-01T00:00:01Z) < first", E),
    ("last - (@2026-01-01T00:00:00Z - @2026-01-01T00:00:01Z) > last", E),
    ("@0001-01-01T00:01:00Z - minutes(1) == first", T),
    ("@9999-12-31T23:58:59Z + minutes(1) == last", T),
    # unresolved and Kleene logic carry through
    ("days(missing.n) > days(1)", U), ("missing.t - days(1) < grant.ends", U),
    ("grant.ends - missing.t > days(1)", U), ("b.yes or days(s.x) > days(1)", T),
    ("days(s.x) > days(missing.n)", E), ("days(missing.n) > days(s.x)", E),
]


@pytest.mark.parametrize("evaluator", list(EVALUATORS))
@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_time_arithmetic_semantics(evaluator: str, text: str, expected: Outcome) -> None:
    result = EVALUATORS[evaluator](parse_expression(text), FACTS, REQUEST)
    assert result.outcome is expected, result.detail


def test_error_messages_say_what_went_wrong() -> None:
    for evaluator in EVALUATORS.values():
        def detail(text: str, run: Evaluator = evaluator) -> str:
            return run(parse_expression(text), FACTS, REQUEST).detail
        assert "expects a number, got string" in detail("days(s.x) > days(1)")
        assert "got timestamp and timestamp" in detail("grant.issued + grant.ends > grant.ends")
        assert "10,000 years" in detail("days(3652501) > days(1)")
        assert "out of range" in detail("first - days(1) < first") or \
            "years 1..9999" in detail("first - days(1) < first")


def test_parse_shapes() -> None:
    assert parse_expression("request.environment.time - days(30) < a.at") == Compare(
        "<", Arith("-", Name("request.environment.time"), Duration("days", Lit("number", 30))),
        Name("a.at"))
    assert parse_expression("hours(n.x + 1) == minutes(90)") == Compare(
        "==", Duration("hours", Arith("+", Name("n.x"), Lit("number", 1))),
        Duration("minutes", Lit("number", 90)))
    assert parse_expression("weeks(-2) < days(0.5)") == Compare(
        "<", Duration("weeks", Lit("number", -2)), Duration("days", Lit("number", 0.5)))
    # a fact key may begin with a unit name
    assert parse_expression("days.left > 1") == Compare(">", Name("days.left"),
                                                        Lit("number", 1))


@pytest.mark.parametrize(("text", "line", "column", "message"), [
    ("a.at > request.environment.time - 30 days", 1, 38, "durations are written days(N)"),
    ("a.at > request.environment.time - days", 1, 35, "'days' at line 1, column 35 is a "
                                                      "duration: write days(N)"),
    ("a.at >\n  t - hours(1, 2)", 2, 14, "unexpected ','"),
    ("days() > hours(1)", 1, 6, "unexpected ')'"),
    ("a.at > t - dayz(3)", 1, 12, "did you mean 'days'?"),
    ("minutes(1 for x in r) > 0", 1, 1, "minutes takes one number"),
    ("weeks(2 where true) > 0", 1, 1, "weeks takes one number"),
])
def test_parse_errors_name_the_position(text: str, line: int, column: int,
                                        message: str) -> None:
    with pytest.raises(ExpressionSyntaxError) as caught:
        parse_expression(text)
    assert (caught.value.line, caught.value.column) == (line, column)
    assert message in str(caught.value)
    assert "^" in str(caught.value)


# ---- differential test: random time arithmetic, both evaluators agree ----------------------

_TIMES = ["2026-05-01T09:00:00Z", "2026-05-31T23:59:59Z", "2026-02-28T12:00:00Z",
          "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "1970-01-01T00:00:00Z",
          "0001-01-01T00:01:00Z", "9999-12-31T23:58:59Z"]
_NUMBERS = st.one_of(
    st.integers(min_value=-400, max_value=400),
    st.sampled_from([0, 0.5, -0.25, 1.5, 1, 2, -1, -2, 3652500, 3652501, 521785, 521786,
                     5259600000, 5259600001, 10**12, 1e300]),
    st.floats(min_value=-1e4, max_value=1e4, allow_nan=False, allow_infinity=False))
_UNITS = st.sampled_from(["minutes", "hours", "days", "weeks"])
_FACT_POOL = [TypedFact("timestamp", t) for t in _TIMES] + [
    TypedFact("number", 30), TypedFact("number", -1.5), TypedFact("string", "x"),
    TypedFact("null", None), TypedFact("boolean", True)]
_FACT_NAMES = [f"f.v{i}" for i in range(4)]
# Facts that are usually times (f.t*) or usually numbers (f.n*), for the well-typed strategy.
_TIME_FACTS = [TypedFact("timestamp", t) for t in _TIMES] + [TypedFact("string", "x")]
_NUMBER_FACTS = [TypedFact("number", n) for n in (30, -1.5, 0, 3652500)] + [
    TypedFact("null", None)]
_TYPED_FACTS = {"f.t0": _TIME_FACTS, "f.t1": _TIME_FACTS, "f.n0": _NUMBER_FACTS,
                "f.n1": _NUMBER_FACTS}

_leaves: st.SearchStrategy[Expr] = st.one_of(
    st.sampled_from([Lit("timestamp", t) for t in _TIMES]),
    st.builds(lambda n: Lit("number", n), _NUMBERS),
    st.sampled_from([Name(n) for n in _FACT_NAMES] + [
        Name("request.environment.time"), Name("missing.x"), Lit("null", None),
        Lit("string", "a"), Lit("boolean", True)]),
)


def _extend(inner: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    return st.one_of(
        st.builds(Duration, _UNITS, inner),
        st.builds(Arith, st.sampled_from(["+", "-"]), inner, inner),
        st.builds(Compare, st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), inner, inner),
        st.builds(BoolOp, st.sampled_from(["and", "or"]), inner, inner),
        st.builds(Not, inner),
    )


_UNTYPED = st.recursive(_leaves, _extend, max_leaves=10)

# Well-typed time expressions over mostly well-typed facts, so that many examples are
# determinate (the untyped strategy above covers the ill-typed mixes).
_numbers: st.SearchStrategy[Expr] = st.deferred(lambda: st.one_of(
    st.builds(lambda n: Lit("number", n), _NUMBERS),
    st.sampled_from([Name("f.n0"), Name("f.n1"), Name("missing.n")]),
    st.builds(Arith, st.sampled_from(["+", "-"]), _numbers, _numbers)))
_durations: st.SearchStrategy[Expr] = st.deferred(lambda: st.one_of(
    st.builds(Duration, _UNITS, _numbers),
    st.builds(Duration, _UNITS, _numbers),
    st.builds(Arith, st.sampled_from(["+", "-"]), _durations, _durations),
    st.builds(Arith, st.just("-"), _times, _times)))
_times: st.SearchStrategy[Expr] = st.deferred(lambda: st.one_of(
    st.sampled_from([Lit("timestamp", t) for t in _TIMES]),
    st.sampled_from([Name("request.environment.time"), Name("f.t0"), Name("f.t1")]),
    st.builds(Arith, st.sampled_from(["+", "-"]), _times, _durations),
    st.builds(Arith, st.just("+"), _durations, _times)))
_CMP = st.sampled_from(["==", "!=", "<", "<=", ">", ">="])
_typed: st.SearchStrategy[Expr] = st.deferred(lambda: st.one_of(
    st.builds(Compare, _CMP, _times, _times),
    st.builds(Compare, _CMP, _durations, _durations),
    st.builds(Compare, _CMP, _times, _durations),
    st.builds(BoolOp, st.sampled_from(["and", "or"]), _typed, _typed),
    st.builds(Not, _typed)))
_EXPRESSIONS = st.one_of(_typed, _typed, _UNTYPED)


_FACTS = st.fixed_dictionaries({}, optional={
    **{n: st.sampled_from(_FACT_POOL) for n in _FACT_NAMES},
    **{n: st.sampled_from(pool) for n, pool in _TYPED_FACTS.items()}})


@pytest.mark.slow  # 100 random expressions; the worked examples above stay in the fast suite
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expr=_EXPRESSIONS, facts=_FACTS)
def test_differential_time_arithmetic(expr: Expr, facts: dict[str, TypedFact]) -> None:
    request = {"environment": {"time": "2026-05-31T10:00:00Z"}}
    first, second = interpret(expr, facts, request), evaluate_sql(expr, facts, request)
    assert first.outcome is second.outcome, (expr, facts, first, second)


@settings(max_examples=150, deadline=None)
@given(start=st.sampled_from(_TIMES), unit=_UNITS, n=_NUMBERS, op=st.sampled_from(["+", "-"]),
       other=st.sampled_from(_TIMES), cmp=st.sampled_from(["<", "<=", "==", ">=", ">", "!="]))
def test_differential_time_comparisons(start: str, unit: str, n: float, op: str, other: str,
                                       cmp: str) -> None:
    """The shape authors write (``time - days(n) <= other``) agrees, boundaries included."""
    expr = Compare(cmp, Arith(op, Lit("timestamp", start), Duration(unit, Lit("number", n))),  # type: ignore[arg-type]
                   Lit("timestamp", other))
    first, second = interpret(expr, {}, {}), evaluate_sql(expr, {}, {})
    assert first.outcome is second.outcome, (expr, first, second)
    seconds = abs(n) * {"minutes": 60, "hours": 3600, "days": 86400, "weeks": 604800}[unit]
    if seconds > MAX_DURATION_SECONDS:
        assert first.outcome is E
