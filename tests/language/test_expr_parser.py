"""The expression grammar: precedence, literals, names and syntax errors."""

from __future__ import annotations

import pytest

from authpairs.tracks.language.expr.ast import (
    Arith,
    BoolOp,
    Compare,
    Length,
    ListLit,
    Lit,
    Name,
    Not,
    names,
)
from authpairs.tracks.language.expr.parser import ExpressionSyntaxError, parse_expression


def test_precedence_or_and_not_comparison() -> None:
    tree = parse_expression('a == "x" and not b or c < 3')
    assert tree == BoolOp(
        "or",
        BoolOp("and", Compare("==", Name("a"), Lit("string", "x")), Not(Name("b"))),
        Compare("<", Name("c"), Lit("number", 3)))


def test_arithmetic_is_left_associative_and_binds_tighter_than_comparison() -> None:
    tree = parse_expression("a - 1 + 2 <= b")
    assert tree == Compare("<=", Arith("+", Arith("-", Name("a"), Lit("number", 1)),
                                       Lit("number", 2)), Name("b"))


def test_literals() -> None:
    assert parse_expression("x == 7.50") == Compare("==", Name("x"), Lit("number", 7.5))
    assert parse_expression("x == -3") == Compare("==", Name("x"), Lit("number", -3))
    assert parse_expression("x == 'it\\'s'") == Compare("==", Name("x"), Lit("string", "it's"))
    assert parse_expression("x == null") == Compare("==", Name("x"), Lit("null", None))
    assert parse_expression("x == true") == Compare("==", Name("x"), Lit("boolean", True))
    assert parse_expression("x < @2026-03-04T10:15:00Z") == Compare(
        "<", Name("x"), Lit("timestamp", "2026-03-04T10:15:00Z"))
    assert parse_expression('x in ["a", 2]') == Compare(
        "in", Name("x"), ListLit((Lit("string", "a"), Lit("number", 2))))
    assert parse_expression("length([]) == 0") == Compare(
        "==", Length(ListLit(())), Lit("number", 0))


def test_all_fourteen_operators_parse() -> None:
    text = ('not (a and b or c == d and c != d and e < f and e <= f and e > f and e >= f '
            'and g in h and h subset i and length(h) + 1 - 2 == 3)')
    tree = parse_expression(text)
    assert isinstance(tree, Not)
    assert names(tree) == ["a", "b", "c", "d", "e", "f", "g", "h", "i"]


def test_names_keep_request_paths_and_keyword_prefixes() -> None:
    tree = parse_expression("request.arguments.amount <= notice.limit and index.in_scope "
                            "and length.max > 0")
    assert names(tree) == ["request.arguments.amount", "notice.limit", "index.in_scope",
                           "length.max"]


@pytest.mark.parametrize("text", [
    "a < b < c",            # comparisons do not chain
    "a ==",                 # missing operand
    "a and",                # dangling operator
    "(a == b",              # unbalanced parenthesis
    "[a, b] subset c",      # list literals hold literals only
    "a = b",                # single '='
    "x < @2026-02-30T10:00:00Z",  # impossible date
    "x < @2026-03-04",      # incomplete timestamp
    "foo(x)",               # unknown function
    "a && b",               # not the language
    '"unterminated',
])
def test_syntax_errors(text: str) -> None:
    with pytest.raises(ExpressionSyntaxError):
        parse_expression(text)


def test_syntax_error_reports_position() -> None:
    with pytest.raises(ExpressionSyntaxError, match="line 1, column 7"):
        parse_expression("a < b < c")
