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
    """``+`` / ``-`` on numbers."""

    op: TypingLiteral["+", "-"]
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Length:
    """``length(x)``: number of elements of a list."""

    operand: Expr


Expr = Lit | ListLit | Name | Not | BoolOp | Compare | Arith | Length


def children(node: Expr) -> tuple[Expr, ...]:
    """Direct sub-expressions of ``node``."""
    if isinstance(node, ListLit):
        return node.items
    if isinstance(node, Not | Length):
        return (node.operand,)
    if isinstance(node, BoolOp | Compare | Arith):
        return (node.left, node.right)
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
