"""Lark grammar of the permission-expression language and its transformation into the AST.

Precedence, lowest first: ``or``, ``and``, ``not``, comparisons (``== != < <= > >= in subset``,
non-associative), ``+``/``-`` (left-associative), atoms (literals, names, calls, parentheses,
list literals). Calls are ``length(x)``, the durations ``minutes|hours|days|weeks(n)`` and the
record aggregates ``any|all|count|sum|min|max([value for] var in records [where condition])``.

Syntax errors teach: they name the expected tokens, show the line with a caret under the
offending column and suggest the nearest operator (or known fact name).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import (
    LarkError,
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)
from lark.lexer import PatternStr

from authpairs.cases.canonical import parse_utc
from authpairs.errors import DataError
from authpairs.tracks.language.expr import ast

KEYWORDS: tuple[str, ...] = ("and", "or", "not", "in", "subset", "true", "false", "null",
                             "for", "where")

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
     | NAME "(" or_expr ["for" or_expr] ["where" or_expr] ")" -> call
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
""".replace("KEYWORD", "(?:" + "|".join(KEYWORDS) + ")")

_ESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t"}


FUNCTIONS: tuple[str, ...] = ("length", *ast.DURATION_UNITS, *ast.AGGREGATES)
_OPERATORS = (*KEYWORDS, *FUNCTIONS, "==", "!=", "<", "<=", ">", ">=", "+", "-")
_ALIASES = {"=": "==", "&&": "and", "&": "and", "||": "or", "|": "or", "!": "not",
            "<>": "!=", "=<": "<=", "=>": ">="}
_TERMINAL_WORDS = {
    "NAME": "a name", "NUMBER": "a number", "STRING": "a string",
    "TIMESTAMP": "a timestamp @YYYY-MM-DDTHH:MM:SSZ", "CMP": "a comparison (== != < <= > >=)",
    "ADDOP": "'+' or '-'", "$END": "the end of the expression",
}
_KEYWORD_TERMINALS = {word.upper() for word in KEYWORDS}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*|[=&|!<>]+|\S")


class ExpressionSyntaxError(DataError):
    """The expression text is not a valid permission expression.

    ``line`` and ``column`` (1-based) locate the problem when it is known.
    """

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def caret_excerpt(text: str, line: int, column: int, width: int = 60) -> str:
    """The source line (windowed around ``column``) and a caret under that column."""
    lines = text.splitlines() or [""]
    source = lines[min(max(line, 1), len(lines)) - 1]
    start = max(0, column - 1 - width)
    end = column - 1 + width
    prefix = "..." if start else ""
    snippet = prefix + source[start:end] + ("..." if end < len(source) else "")
    return f"  {snippet}\n  {' ' * (len(prefix) + column - 1 - start)}^"


def suggest(word: str, known: Iterable[str] = (), prefer: Iterable[str] = ()) -> str | None:
    """The nearest operator, function or known name to ``word`` (None when nothing is close);
    words in ``prefer`` (what the parser expected there) are tried first."""
    if word in _ALIASES:
        return _ALIASES[word]
    key = word.lower() if word.isupper() else word
    for vocabulary in (list(prefer), [*_OPERATORS, *known]):
        match = difflib.get_close_matches(key, vocabulary, n=1, cutoff=0.6)
        if match and match[0] != word:
            return match[0]
    return None


def _expected_words(terminals: Iterable[str], known: Iterable[str]) -> list[str]:
    """The operator words (and, for a name, functions and known names) the parser accepts."""
    words: list[str] = []
    for name in terminals:
        if name == "CMP":
            words.extend(("==", "!=", "<", "<=", ">", ">="))
        elif name == "NAME":
            words.extend((*FUNCTIONS, *known))
        elif name in _KEYWORD_TERMINALS:
            words.append(name.lower())
    return words


def _describe(terminals: Iterable[str]) -> str:
    shown: set[str] = set()
    for name in terminals:
        if name in _TERMINAL_WORDS:
            shown.add(_TERMINAL_WORDS[name])
            continue
        try:
            pattern = _parser().get_terminal(name).pattern
        except KeyError:
            shown.add(name)
            continue
        shown.add(f"'{pattern.value}'" if isinstance(pattern, PatternStr) else name.lower())
    return ", ".join(sorted(shown))


def _located(text: str, exc: UnexpectedInput, known: Iterable[str]) -> ExpressionSyntaxError:
    """A teaching error from lark's exception: what was found, the caret, what was expected."""
    line, column = exc.line, exc.column
    if isinstance(exc, UnexpectedToken):
        found = str(exc.token)
        expected: Iterable[str] = exc.accepts or exc.expected
        if exc.token.type == "$END" or isinstance(exc, UnexpectedEOF):
            lines = text.splitlines() or [""]
            line, column, found = len(lines), len(lines[-1]) + 1, ""
    elif isinstance(exc, UnexpectedCharacters):
        match = _WORD.match(text, exc.pos_in_stream or 0)
        found = match.group(0) if match else ""
        expected = exc.allowed
    else:
        found, expected = "", getattr(exc, "expected", ())
    what = f"unexpected {found!r}" if found else "unexpected end of expression"
    message = f"syntax error at line {line}, column {column}: {what}\n" \
              f"{caret_excerpt(text, line, column)}\nexpected one of: {_describe(expected)}"
    expected = list(expected)
    hint = suggest(found, known, _expected_words(expected, known)) if found else None
    if found in ast.DURATION_UNITS:
        message += f"\ndurations are written {found}(N), e.g. request.environment.time - " \
                   f"{found}(30)"
    elif hint:
        message += f"\ndid you mean {hint!r}?"
    return ExpressionSyntaxError(message, line, column)


def _unquote(text: str) -> str:
    def escape(match: re.Match[str]) -> str:
        char = match.group(1)
        if char not in _ESCAPES:
            raise ExpressionSyntaxError(f"unknown escape '\\{char}' in string {text}")
        return _ESCAPES[char]

    return re.sub(r"\\(.)", escape, text[1:-1], flags=re.DOTALL)


def _bind(node: ast.Expr, var: str) -> ast.Expr:
    """Turn the names ``var.field`` inside an aggregate body into :class:`Field` nodes."""
    if isinstance(node, ast.Name):
        head, _, rest = node.path.partition(".")
        if head != var:
            return node
        if not rest or "." in rest:
            raise ExpressionSyntaxError(
                f"'{node.path}': '{var}' stands for one record; name one of its fields, "
                f"e.g. {var}.amount (records have flat fields)")
        return ast.Field(var, rest)
    if isinstance(node, ast.Aggregate) and node.var == var:  # an inner aggregate shadows var
        return dataclasses.replace(node, source=_bind(node.source, var))
    changes: dict[str, Any] = {}
    for item in dataclasses.fields(node):
        value = getattr(node, item.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            changes[item.name] = _bind(value, var)  # type: ignore[arg-type]
    return dataclasses.replace(node, **changes) if changes else node


@v_args(inline=True)
class _ToAst(Transformer[Token, ast.Expr]):
    """Turns the lark parse tree into AST nodes."""

    def or_(self, left: ast.Expr, right: ast.Expr) -> ast.Expr:
        return ast.BoolOp("or", left, right)

    def and_(self, left: ast.Expr, right: ast.Expr) -> ast.Expr:
        return ast.BoolOp("and", left, right)

    def not_(self, operand: ast.Expr) -> ast.Expr:
        return ast.Not(operand)

    def compare(self, left: ast.Expr, op: Token, right: ast.Expr) -> ast.Expr:
        return ast.Compare(str(op), left, right)  # type: ignore[arg-type]

    def in_(self, left: ast.Expr, right: ast.Expr) -> ast.Expr:
        return ast.Compare("in", left, right)

    def subset_(self, left: ast.Expr, right: ast.Expr) -> ast.Expr:
        return ast.Compare("subset", left, right)

    def arith(self, left: ast.Expr, op: Token, right: ast.Expr) -> ast.Expr:
        return ast.Arith(str(op), left, right)  # type: ignore[arg-type]

    def call(self, func: Token, first: ast.Expr, binder: ast.Expr | None,
             where: ast.Expr | None) -> ast.Expr:
        name = str(func)
        where_at = f"in {name}(...) at line {func.line}, column {func.column}"
        if name not in FUNCTIONS:
            hint = suggest(name, FUNCTIONS)
            raise ExpressionSyntaxError(
                f"unknown function '{name}' at line {func.line}, column {func.column} "
                f"(functions: {', '.join(FUNCTIONS)})" + (f"; did you mean {hint!r}?"
                                                         if hint else ""),
                func.line, func.column)
        if name == "length" or name in ast.DURATION_UNITS:
            if binder is not None or where is not None:
                takes = "one list" if name == "length" else f"one number, e.g. {name}(30)"
                raise ExpressionSyntaxError(f"'for'/'where' {where_at}: {name} takes {takes}",
                                            func.line, func.column)
            if name == "length":
                return ast.Length(first)
            return ast.Duration(name, first)  # type: ignore[arg-type]
        value, binding = (first, binder) if binder is not None else (None, first)
        if not (isinstance(binding, ast.Compare) and binding.op == "in"
                and isinstance(binding.left, ast.Name) and "." not in binding.left.path
                and binding.left.path != "request"):
            raise ExpressionSyntaxError(
                f"{where_at}: expected 'item in records', e.g. {name}(a in approvals where "
                "a.role == \"finance\")", func.line, func.column)
        if name in ("sum", "min", "max") and value is None:
            raise ExpressionSyntaxError(
                f"{where_at}: {name} needs a value, e.g. {name}(c.amount for c in "
                "commitments)", func.line, func.column)
        var = binding.left.path
        return ast.Aggregate(name, var, binding.right,  # type: ignore[arg-type]
                             None if where is None else _bind(where, var),
                             None if value is None else _bind(value, var))

    def name(self, token: Token) -> ast.Expr:
        if str(token) in ast.DURATION_UNITS:
            raise ExpressionSyntaxError(
                f"'{token}' at line {token.line}, column {token.column} is a duration: write "
                f"{token}(N), e.g. {token}(30)", token.line, token.column)
        return ast.Name(str(token))

    def list_(self, *items: Any) -> ast.Expr:
        lits = tuple(item for item in items if item is not None)
        for lit in lits:
            if not isinstance(lit, ast.Lit) or lit.kind not in ("string", "number"):
                raise ExpressionSyntaxError("list literals may hold only strings and numbers")
        return ast.ListLit(lits)

    def string(self, token: Token) -> ast.Expr:
        return ast.Lit("string", _unquote(str(token)))

    def number(self, token: Token) -> ast.Expr:
        text = str(token)
        return ast.Lit("number", float(text) if "." in text else int(text))

    def timestamp(self, token: Token) -> ast.Expr:
        text = str(token)[1:]
        if parse_utc(text) is None:
            raise ExpressionSyntaxError(f"invalid timestamp literal @{text}")
        return ast.Lit("timestamp", text)

    def true(self) -> ast.Expr:
        return ast.Lit("boolean", True)

    def false(self) -> ast.Expr:
        return ast.Lit("boolean", False)

    def null(self) -> ast.Expr:
        return ast.Lit("null", None)


@lru_cache(maxsize=1)
def _parser() -> Lark:
    return Lark(GRAMMAR, parser="lalr", lexer="contextual", maybe_placeholders=True)


@lru_cache(maxsize=4096)
def parse_expression(text: str, known: tuple[str, ...] = ()) -> ast.Expr:
    """Parse ``text`` into an AST. Raises :class:`ExpressionSyntaxError` with the position,
    the expected tokens and a suggestion (``known``: fact names to suggest from)."""
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as exc:
        raise _located(text, exc, known) from exc
    except LarkError as exc:
        raise ExpressionSyntaxError(f"syntax error: {exc}") from exc
    try:
        result: ast.Expr = _ToAst().transform(tree)
    except VisitError as exc:
        orig = exc.orig_exc
        if isinstance(orig, ExpressionSyntaxError):
            if orig.line is not None and orig.column is not None:
                raise ExpressionSyntaxError(
                    f"{orig}\n{caret_excerpt(text, orig.line, orig.column)}",
                    orig.line, orig.column) from exc
            raise orig from exc
        raise ExpressionSyntaxError(str(orig)) from exc
    return result
