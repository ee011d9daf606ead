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


def _error(text: str, known: tuple[str, ...] = ()) -> ExpressionSyntaxError:
    with pytest.raises(ExpressionSyntaxError) as info:
        parse_expression(text, known)
    return info.value


def test_error_names_expected_tokens_and_puts_the_caret_under_the_column() -> None:
    error = _error('grant.holder = "x"')
    assert (error.line, error.column) == (1, 14)
    lines = str(error).splitlines()
    assert lines[0] == "syntax error at line 1, column 14: unexpected '='"
    assert lines[1] == '  grant.holder = "x"'
    assert lines[2] == "  " + " " * 13 + "^"
    assert lines[3].startswith("expected one of: ") and "'and'" in lines[3] \
        and "a comparison (== != < <= > >=)" in lines[3]
    assert lines[4] == "did you mean '=='?"


def test_error_on_a_later_line_and_at_the_end() -> None:
    error = _error("a == 1\n  and b adn c")
    assert (error.line, error.column) == (2, 9)
    assert "  and b adn c\n          ^" in str(error)
    assert "did you mean 'and'?" in str(error)
    end = _error("a and")
    assert (end.line, end.column) == (1, 6)
    assert "unexpected end of expression" in str(end)
    assert "a name" in str(end) and "'not'" in str(end)


def test_long_lines_are_windowed_around_the_column() -> None:
    text = " and ".join(f"f{i} == {i}" for i in range(60)) + " && x"
    error = _error(text)
    snippet, caret = str(error).splitlines()[1:3]
    assert len(snippet) < 140
    assert snippet[caret.index("^"):].startswith("&& x")


@pytest.mark.parametrize(("text", "hint"), [
    ("a && b", "'and'"), ("a || b", "'or'"), ("lenght(x) == 1", "'length'"),
    ("cuont(a in xs) == 1", "'count'"),
])
def test_suggestions(text: str, hint: str) -> None:
    assert f"did you mean {hint}?" in str(_error(text))


def test_suggests_a_known_fact_name() -> None:
    assert "did you mean 'grant.limit'?" in str(
        _error("grant.holder == 1 grnat.limit", ("grant.holder", "grant.limit")))


@pytest.mark.parametrize(("text", "message"), [
    ("sum(a in xs) > 1", "sum needs a value"),
    ("any(x)", "expected 'item in records'"),
    ("any(a.b in xs)", "expected 'item in records'"),
    ("count(a.x.y for a in xs) == 1", "records have flat fields"),
    ("any(a for a in xs)", "stands for one record"),
    ("length(x for a in xs) == 1", "length takes one list"),
    ("any(request in xs)", "expected 'item in records'"),
])
def test_aggregate_shape_errors(text: str, message: str) -> None:
    assert message in str(_error(text))


def test_aggregate_variables_shadow_and_nest() -> None:
    from authpairs.tracks.language.expr.ast import Aggregate, Field

    tree = parse_expression("any(a in xs where count(a in ys where a.k == 1) == a.n)")
    assert isinstance(tree, Aggregate) and isinstance(tree.where, Compare)
    inner = tree.where.left
    assert isinstance(inner, Aggregate)
    assert inner.where == Compare("==", Field("a", "k"), Lit("number", 1))
    assert tree.where.right == Field("a", "n")
    assert names(tree) == ["xs", "ys"]
