"""AST of permission expressions (immutable dataclasses)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal as TypingLiteral

LiteralKind = TypingLiteral["string", "number", "boolean", "timestamp", "null"]


@dataclass(frozen=True)
class Lit:
    """A scalar literal. ``value`` is str, int/float, bool, the timestamp text, or None."""

    kind: LiteralKind
    value: str | int | float | bool | None


@dataclass(frozen=True)
class ListLit:
    """A list literal of string or number literals."""

    items: tuple[Lit, ...]


@dataclass(frozen=True)
class Name:
    """A dotted name: a fact key or a ``request.*`` field."""

    path: str


@dataclass(frozen=True)
class Not:
    """Logical negation."""

    operand: Expr


@dataclass(frozen=True)
class BoolOp:
    """``and`` / ``or``."""

    op: TypingLiteral["and", "or"]
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Compare:
    """``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``in``, ``subset``."""

    op: TypingLiteral["==", "!=", "<", "<=", ">", ">=", "in", "subset"]
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Arith:
    """``+`` / ``-``: on numbers, or time arithmetic (a time plus or minus a duration, two
    durations, or the duration between two times)."""

    op: TypingLiteral["+", "-"]
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Length:
    """``length(x)``: number of elements of a list."""

    operand: Expr


DurationUnit = TypingLiteral["minutes", "hours", "days", "weeks"]
#: Seconds in one unit of each duration function (``days(30)`` is 30 * 86,400 seconds).
DURATION_UNITS: dict[str, int] = {"minutes": 60, "hours": 3_600, "days": 86_400,
                                  "weeks": 604_800}


@dataclass(frozen=True)
class Duration:
    """``minutes(n)`` / ``hours(n)`` / ``days(n)`` / ``weeks(n)``: a length of time of ``n``
    (any number expression) units, to add to or subtract from a time."""

    unit: DurationUnit
    operand: Expr


AggregateFunc = TypingLiteral["any", "all", "count", "sum", "min", "max"]
AGGREGATES: tuple[str, ...] = ("any", "all", "count", "sum", "min", "max")


@dataclass(frozen=True)
class Field:
    """``var.field``: a field of the record that an enclosing aggregate binds to ``var``."""

    var: str
    field: str


@dataclass(frozen=True)
class Aggregate:
    """``func([value for] var in source [where condition])`` over a list of records.

    ``any``/``all`` without ``value`` ask whether some/every record passes ``where``; with
    ``value`` whether some/every record that passes ``where`` makes ``value`` true. ``count``
    counts the records that pass (with ``value``: their distinct values); ``sum``/``min``/``max``
    fold ``value`` over them.
    """

    func: AggregateFunc
    var: str
    source: Expr
    where: Expr | None
    value: Expr | None


Expr = (Lit | ListLit | Name | Not | BoolOp | Compare | Arith | Length | Duration | Field
        | Aggregate)


def quantifier_item(node: Aggregate) -> Expr:
    """The per-record boolean that ``any`` folds with ``or`` and ``all`` folds with ``and``.

    ``any``: ``where and value``; ``all``: ``not where or value``; without ``value``: ``where``
    (or ``true`` when there is no ``where`` either). Both evaluators use this one definition.
    """
    true = Lit("boolean", True)
    if node.value is None:
        return node.where if node.where is not None else true
    if node.where is None:
        return node.value
    if node.func == "any":
        return BoolOp("and", node.where, node.value)
    return BoolOp("or", Not(node.where), node.value)


def children(node: Expr) -> tuple[Expr, ...]:
    """Direct sub-expressions of ``node``."""
    if isinstance(node, ListLit):
        return node.items
    if isinstance(node, Not | Length | Duration):
        return (node.operand,)
    if isinstance(node, BoolOp | Compare | Arith):
        return (node.left, node.right)
    if isinstance(node, Aggregate):
        return tuple(sub for sub in (node.source, node.where, node.value) if sub is not None)
    return ()


def walk(node: Expr) -> Iterator[Expr]:
    """All nodes of the tree, pre-order."""
    yield node
    for child in children(node):
        yield from walk(child)


def names(node: Expr) -> list[str]:
    """Distinct dotted names referenced by the expression, in first-use order."""
    seen: dict[str, None] = {}
    for sub in walk(node):
        if isinstance(sub, Name):
            seen.setdefault(sub.path, None)
    return list(seen)


def fields_of(node: Expr) -> list[tuple[Expr, str]]:
    """``(source, field)`` for every record field the expression reads, in first-use order.

    ``source`` is the expression the field's variable ranges over (usually a fact name).
    """
    found: dict[tuple[Expr, str], None] = {}

    def visit(sub: Expr, scope: dict[str, Expr]) -> None:
        if isinstance(sub, Field):
            found.setdefault((scope[sub.var], sub.field), None)
        elif isinstance(sub, Aggregate):
            visit(sub.source, scope)
            inner = {**scope, sub.var: sub.source}
            for part in (sub.where, sub.value):
                if part is not None:
                    visit(part, inner)
        else:
            for child in children(sub):
                visit(child, scope)

    visit(node, {})
    return list(found)
