"""Lark grammar of the permission-expression language and its transformation into the AST.

Precedence, lowest first: ``or``, ``and``, ``not``, comparisons (``== != < <= > >= in subset``,
non-associative), ``+``/``-`` (left-associative), atoms (literals, names, ``length(x)``,
parentheses, list literals).
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import Any

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import LarkError, UnexpectedInput, VisitError

from authpairs.errors import DataError
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

GRAMMAR = r"""
?start: or_expr

?or_expr: and_expr
        | or_expr "or" and_expr          -> or_
?and_expr: not_expr
         | and_expr "and" not_expr       -> and_
?not_expr: comparison
         | "not" not_expr                -> not_
?comparison: sum
           | sum CMP sum                 -> compare
           | sum "in" sum                -> in_
           | sum "subset" sum            -> subset_
?sum: atom
    | sum ADDOP atom                     -> arith
?atom: literal
     | NAME "(" or_expr ")"              -> call
     | NAME                              -> name
     | "(" or_expr ")"
     | "[" [literal ("," literal)*] "]"  -> list_
?literal: STRING                         -> string
        | NUMBER                         -> number
        | TIMESTAMP                      -> timestamp
        | "true"                         -> true
        | "false"                        -> false
        | "null"                         -> null

CMP: "==" | "!=" | "<=" | ">=" | "<" | ">"
ADDOP: "+" | "-"
TIMESTAMP: /@\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/
NUMBER: /-?\d+(\.\d+)?/
STRING: /"(?:[^"\\\n]|\\.)*"/ | /'(?:[^'\\\n]|\\.)*'/
NAME: /(?!KEYWORD(?![A-Za-z0-9_.]))[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*/

%import common.WS
%ignore WS
""".replace("KEYWORD", "(?:and|or|not|in|subset|true|false|null)")

_ESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t"}


class ExpressionSyntaxError(DataError):
    """The expression text is not a valid permission expression."""


def _unquote(text: str) -> str:
    body = text[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char == "\\":
            nxt = body[i + 1]
            if nxt not in _ESCAPES:
                raise ExpressionSyntaxError(f"unknown escape '\\{nxt}' in string {text}")
            out.append(_ESCAPES[nxt])
            i += 2
        else:
            out.append(char)
            i += 1
    return "".join(out)


@v_args(inline=True)
class _ToAst(Transformer[Token, Expr]):
    """Turns the lark parse tree into AST nodes."""

    def or_(self, left: Expr, right: Expr) -> Expr:
        return BoolOp("or", left, right)

    def and_(self, left: Expr, right: Expr) -> Expr:
        return BoolOp("and", left, right)

    def not_(self, operand: Expr) -> Expr:
        return Not(operand)

    def compare(self, left: Expr, op: Token, right: Expr) -> Expr:
        return Compare(str(op), left, right)  # type: ignore[arg-type]

    def in_(self, left: Expr, right: Expr) -> Expr:
        return Compare("in", left, right)

    def subset_(self, left: Expr, right: Expr) -> Expr:
        return Compare("subset", left, right)

    def arith(self, left: Expr, op: Token, right: Expr) -> Expr:
        return Arith(str(op), left, right)  # type: ignore[arg-type]

    def call(self, func: Token, arg: Expr) -> Expr:
        if str(func) != "length":
            raise ExpressionSyntaxError(f"unknown function '{func}' (only length(x) exists)")
        return Length(arg)

    def name(self, token: Token) -> Expr:
        return Name(str(token))

    def list_(self, *items: Any) -> Expr:
        lits = tuple(item for item in items if item is not None)
        for lit in lits:
            if not isinstance(lit, Lit) or lit.kind not in ("string", "number"):
                raise ExpressionSyntaxError("list literals may hold only strings and numbers")
        return ListLit(lits)

    def string(self, token: Token) -> Expr:
        return Lit("string", _unquote(str(token)))

    def number(self, token: Token) -> Expr:
        text = str(token)
        return Lit("number", float(text) if "." in text else int(text))

    def timestamp(self, token: Token) -> Expr:
        text = str(token)[1:]
        try:
            datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")
        except ValueError as exc:
            raise ExpressionSyntaxError(f"invalid timestamp literal @{text}") from exc
        return Lit("timestamp", text)

    def true(self) -> Expr:
        return Lit("boolean", True)

    def false(self) -> Expr:
        return Lit("boolean", False)

    def null(self) -> Expr:
        return Lit("null", None)


@lru_cache(maxsize=1)
def _parser() -> Lark:
    return Lark(GRAMMAR, parser="lalr", lexer="contextual", maybe_placeholders=True)


@lru_cache(maxsize=4096)
def parse_expression(text: str) -> Expr:
    """Parse ``text`` into an AST. Raises :class:`ExpressionSyntaxError` with the position."""
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as exc:
        raise ExpressionSyntaxError(
            f"syntax error at line {exc.line}, column {exc.column}: "
            f"{exc.get_context(text).strip()!r}") from exc
    except LarkError as exc:
        raise ExpressionSyntaxError(f"syntax error: {exc}") from exc
    try:
        result: Expr = _ToAst().transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, ExpressionSyntaxError):
            raise exc.orig_exc from exc
        raise ExpressionSyntaxError(str(exc.orig_exc)) from exc
    return result
