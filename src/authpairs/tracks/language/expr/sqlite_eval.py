"""Evaluator 2: compiles a permission expression to one SQL query and runs it in SQLite.

This is a separate implementation of the semantics documented in :mod:`.interpreter`; it shares
only the parser/AST and the result type. Facts and request fields are loaded into a table
``facts(name, type, v)``:

* a name without a row is *unresolved*: its type is SQL ``NULL``, and SQL's own three-valued
  ``AND``/``OR`` carry it through the logic;
* an explicit null is a row with ``type = 'null'`` -- a different representation;
* timestamps are stored as their text and turned into epoch seconds by SQLite (``unixepoch``);
  their canonical form is verified by SQLite (round trip through ``julianday``);
* lists are JSON arrays, inspected with ``json_each`` / ``json_array_length``.

Every AST node becomes a one-row common table expression ``nK(t, v, e)``: ``t`` the type (``NULL``
unresolved, ``'error'`` an error), ``v`` the value, ``e`` an error message.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from authpairs.tracks.language.expr.ast import (
    Arith,
    BoolOp,
    Expr,
    Length,
    ListLit,
    Lit,
    Name,
    Not,
)
from authpairs.tracks.language.expr.result import EvalResult, Outcome, TypedFact

_SCHEMA = "CREATE TABLE facts (name TEXT PRIMARY KEY, type TEXT NOT NULL, v)"
_CANON_FMT = "%Y-%m-%dT%H:%M:%SZ"
_TS_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z"

# After loading: classify request strings as timestamps, and mark malformed values as errors.
_NORMALISE = [
    f"""UPDATE facts SET type = 'timestamp'
        WHERE type = 'request-string' AND v GLOB '{_TS_GLOB}'
          AND strftime('{_CANON_FMT}', julianday(v)) = v""",
    "UPDATE facts SET type = 'string' WHERE type = 'request-string'",
    f"""UPDATE facts SET type = 'error', v = 'not canonical UTC: ' || quote(v)
        WHERE type = 'timestamp' AND (typeof(v) <> 'text' OR NOT v GLOB '{_TS_GLOB}'
          OR strftime('{_CANON_FMT}', julianday(v)) IS NOT v)""",
    """UPDATE facts SET type = 'error', v = 'list elements must be strings or numbers'
        WHERE type = 'list' AND (json_valid(v) = 0 OR json_type(v) <> 'array' OR EXISTS (
          SELECT 1 FROM json_each(facts.v) WHERE type NOT IN ('text', 'integer', 'real')))""",
]


def _store(name: str, kind: str, value: Any, rows: list[tuple[str, str, Any]]) -> None:
    """Append one typed row; anything the table cannot represent becomes an 'error' row."""
    checks = {
        "string": isinstance(value, str),
        "request-string": isinstance(value, str),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
        "boolean": isinstance(value, bool),
        "null": value is None,
        "timestamp": isinstance(value, str),
        "list": isinstance(value, list | tuple),
    }
    if not checks.get(kind, False) or (isinstance(value, int) and not -2**63 <= value < 2**63):
        rows.append((name, "error", f"{name}: value {value!r} does not fit type {kind}"))
    elif kind == "list":
        rows.append((name, "list", json.dumps(list(value))))
    elif kind == "boolean":
        rows.append((name, "boolean", 1 if value else 0))
    else:
        rows.append((name, kind, value))


def _request_rows(prefix: str, value: Any, rows: list[tuple[str, str, Any]]) -> None:
    """Flatten the request: nested mappings become dotted names."""
    if isinstance(value, Mapping):
        rows.append((prefix, "error", f"{prefix}: unsupported value (a mapping)"))
        for key, sub in value.items():
            _request_rows(f"{prefix}.{key}", sub, rows)
        return
    if value is None:
        kind = "null"
    elif isinstance(value, bool):
        kind = "boolean"
    elif isinstance(value, int | float):
        kind = "number"
    elif isinstance(value, str):
        kind = "request-string"
    elif isinstance(value, list):
        kind = "list"
    else:
        rows.append((prefix, "error", f"{prefix}: unsupported value {type(value).__name__}"))
        return
    _store(prefix, kind, value, rows)


class _Compiler:
    """Turns an AST into a chain of one-row CTEs and collects the bound parameters."""

    def __init__(self) -> None:
        self.ctes: list[str] = []
        self.params: list[Any] = []
        self.names: list[str] = []

    def _add(self, sql: str) -> str:
        cte = f"n{len(self.ctes)}"
        self.ctes.append(f"{cte}(t, v, e) AS MATERIALIZED ({sql})")
        return cte

    def compile(self, node: Expr) -> str:
        """Compile ``node``; return the name of its CTE."""
        if isinstance(node, Lit):
            return self._literal(node)
        if isinstance(node, ListLit):
            marks = ", ".join("?" for _ in node.items)
            self.params.extend(item.value for item in node.items)
            return self._add(f"SELECT 'list', json_array({marks}), NULL")
        if isinstance(node, Name):
            if node.path not in self.names:
                self.names.append(node.path)
            self.params.append(node.path)
            return self._add(
                "SELECT f.type, CASE f.type WHEN 'timestamp' THEN unixepoch(f.v) "
                "WHEN 'error' THEN NULL ELSE f.v END, "
                "CASE f.type WHEN 'error' THEN f.v END "
                "FROM (SELECT 1) LEFT JOIN facts f ON f.name = ?")
        if isinstance(node, Not):
            a = self.compile(node.operand)
            return self._add(
                f"SELECT CASE WHEN {a}.t IS NULL THEN NULL WHEN {a}.t = 'boolean' THEN 'boolean' "
                f"ELSE 'error' END, CASE WHEN {a}.t = 'boolean' THEN NOT {a}.v END, "
                f"CASE WHEN {a}.t = 'error' THEN {a}.e WHEN {a}.t <> 'boolean' "
                f"THEN 'not expects a boolean, got ' || {a}.t END FROM {a}")
        if isinstance(node, BoolOp):
            return self._bool(node)
        if isinstance(node, Length):
            a = self.compile(node.operand)
            return self._add(
                f"SELECT CASE WHEN {a}.t IS NULL THEN NULL WHEN {a}.t = 'list' THEN 'number' "
                f"ELSE 'error' END, CASE WHEN {a}.t = 'list' THEN json_array_length({a}.v) END, "
                f"CASE WHEN {a}.t = 'error' THEN {a}.e WHEN {a}.t <> 'list' "
                f"THEN 'length expects a list, got ' || {a}.t END FROM {a}")
        a, b = self.compile(node.left), self.compile(node.right)
        if isinstance(node, Arith):
            return self._binary(a, b, "number", f"{a}.t = 'number' AND {b}.t = 'number'",
                                f"{a}.v {node.op} {b}.v", f"'{node.op} expects numbers'")
        return self._compare(node.op, a, b)

    def _literal(self, node: Lit) -> str:
        if node.kind == "null":
            return self._add("SELECT 'null', NULL, NULL")
        if node.kind == "timestamp":
            self.params.append(node.value)
            return self._add("SELECT 'timestamp', unixepoch(?), NULL")
        self.params.append(1 if node.value is True else 0 if node.value is False else node.value)
        return self._add(f"SELECT '{node.kind}', ?, NULL")

    def _bool(self, node: BoolOp) -> str:
        a, b = self.compile(node.left), self.compile(node.right)
        op = node.op.upper()
        bad = (f"({a}.t IS NOT NULL AND {a}.t <> 'boolean') OR "
               f"({b}.t IS NOT NULL AND {b}.t <> 'boolean')")
        message = (f"COALESCE({a}.e, {b}.e, '{node.op} expects booleans, got ' || "
                   f"CASE WHEN {a}.t <> 'boolean' THEN {a}.t ELSE {b}.t END)")
        # SQL's own Kleene AND/OR over 0/1/NULL decides; a non-boolean side counts as NULL.
        return self._add(
            "SELECT CASE WHEN x.v IS NOT NULL THEN 'boolean' WHEN x.bad THEN 'error' END, "
            "x.v, CASE WHEN x.v IS NULL AND x.bad THEN x.msg END FROM ("
            f"SELECT (CASE WHEN {a}.t = 'boolean' THEN {a}.v END) {op} "
            f"(CASE WHEN {b}.t = 'boolean' THEN {b}.v END) AS v, {bad} AS bad, "
            f"{message} AS msg FROM {a}, {b}) x")

    def _binary(self, a: str, b: str, out_type: str, ok: str, value: str, message: str) -> str:
        """Strict operator: error beats unresolved, unresolved beats a type check."""
        return self._add(
            f"SELECT CASE WHEN {a}.t = 'error' OR {b}.t = 'error' THEN 'error' "
            f"WHEN {a}.t IS NULL OR {b}.t IS NULL THEN NULL WHEN {ok} THEN '{out_type}' "
            f"ELSE 'error' END, "
            f"CASE WHEN {a}.t IS NOT NULL AND {b}.t IS NOT NULL AND {ok} THEN {value} END, "
            f"CASE WHEN {a}.t = 'error' THEN {a}.e WHEN {b}.t = 'error' THEN {b}.e "
            f"WHEN {a}.t IS NULL OR {b}.t IS NULL OR ({ok}) THEN NULL "
            f"ELSE {message} || ', got ' || {a}.t || ' and ' || {b}.t END FROM {a}, {b}")

    def _compare(self, op: str, a: str, b: str) -> str:
        same_kind = (f"(({a}.t = 'string' AND {b}.t = 'string') OR "
                     f"({a}.t IN ('number', 'timestamp', 'boolean') AND {b}.t = {a}.t))")
        list_eq = (f"(json_array_length({a}.v) = json_array_length({b}.v) AND NOT EXISTS ("
                   f"SELECT 1 FROM json_each({a}.v) x JOIN json_each({b}.v) y ON x.key = y.key "
                   f"WHERE NOT (x.atom = y.atom AND (x.type = 'text') = (y.type = 'text'))))")
        equal = (f"(CASE WHEN {a}.t = 'null' AND {b}.t = 'null' THEN 1 "
                 f"WHEN {a}.t = 'list' AND {b}.t = 'list' THEN {list_eq} "
                 f"WHEN {same_kind} THEN {a}.v = {b}.v ELSE 0 END)")
        if op == "==":
            return self._binary(a, b, "boolean", "1", equal, "''")
        if op == "!=":
            return self._binary(a, b, "boolean", "1", f"NOT {equal}", "''")
        if op == "in":
            member = (f"EXISTS (SELECT 1 FROM json_each({b}.v) y WHERE y.atom = {a}.v AND "
                      f"((y.type = 'text' AND {a}.t = 'string') OR "
                      f"(y.type IN ('integer', 'real') AND {a}.t = 'number')))")
            return self._binary(a, b, "boolean", f"{b}.t = 'list' AND {a}.t <> 'list'", member,
                                "'in expects a value and a list'")
        if op == "subset":
            subset = (f"NOT EXISTS (SELECT 1 FROM json_each({a}.v) x WHERE NOT EXISTS ("
                      f"SELECT 1 FROM json_each({b}.v) y WHERE y.atom = x.atom AND "
                      f"(y.type = 'text') = (x.type = 'text')))")
            return self._binary(a, b, "boolean", f"{a}.t = 'list' AND {b}.t = 'list'", subset,
                                "'subset expects two lists'")
        orderable = f"{a}.t = {b}.t AND {a}.t IN ('number', 'timestamp')"
        return self._binary(a, b, "boolean", orderable, f"{a}.v {op} {b}.v",
                            f"'{op} cannot order these types'")


def evaluate_sql(expr: Expr, facts: Mapping[str, TypedFact],
                 request: Mapping[str, Any]) -> EvalResult:
    """Evaluate ``expr`` in a fresh in-memory SQLite database loaded with facts and request."""
    rows: list[tuple[str, str, Any]] = []
    for name, fact in facts.items():
        _store(name, fact.type, fact.value, rows)
    for key, value in request.items():
        _request_rows(f"request.{key}", value, rows)
    compiler = _Compiler()
    root = compiler.compile(expr)
    query = "WITH " + ", ".join(compiler.ctes) + f" SELECT t, v, e FROM {root}"
    with sqlite3.connect(":memory:") as db:
        db.execute(_SCHEMA)
        db.executemany("INSERT OR REPLACE INTO facts (name, type, v) VALUES (?, ?, ?)", rows)
        for statement in _NORMALISE:
            db.execute(statement)
        kind, value, message = db.execute(query, compiler.params).fetchone()
        if kind is None:
            present = {row[0] for row in db.execute("SELECT name FROM facts")}
    db.close()
    if kind == "error":
        return EvalResult(Outcome.ERROR, str(message))
    if kind is None:
        missing = [name for name in compiler.names if name not in present]
        return EvalResult(Outcome.UNRESOLVED, "missing: " + ", ".join(missing))
    if kind != "boolean":
        return EvalResult(Outcome.ERROR, f"expression yields {kind}, not a boolean")
    return EvalResult(Outcome.TRUE if value else Outcome.FALSE)
