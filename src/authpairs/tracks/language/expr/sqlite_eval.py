"""Evaluator 2: compiles a permission expression to one SQL query and runs it in SQLite.

This is a separate implementation of the semantics documented in :mod:`.interpreter`; it shares
only the parser/AST and the result type. Facts and request fields are loaded into a table
``facts(name, type, v)``:

* a name without a row is *unresolved*: its type is SQL ``NULL``, and SQL's own three-valued
  ``AND``/``OR`` carry it through the logic;
* an explicit null is a row with ``type = 'null'`` -- a different representation;
* timestamps are stored as their text and turned into epoch seconds by SQLite (``unixepoch``);
  their canonical form is verified by SQLite (round trip through ``julianday``);
* lists are JSON arrays, inspected with ``json_each`` / ``json_array_length``;
* records are a JSON array of objects ``{field: {"t": type, "v": value}}`` (an absent field has
  no key, so reading it gives SQL ``NULL``: unresolved);
* a duration is a value of type ``'duration'`` holding seconds; time arithmetic is SQL
  arithmetic on epoch seconds, with the result type chosen by a ``CASE`` over both types.

Expressions are evaluated per *scope row*: a scope CTE ``sK(k, p, b)`` lists the variable
bindings ``b`` (a JSON object ``{var: record}``) under a key ``k`` (``p``: the key of the
enclosing scope row). The top scope has one row. Every AST node becomes a CTE ``nK(k, t, v, e)``
with one row per row of its scope: ``t`` the type (``NULL`` unresolved, ``'error'`` an error),
``v`` the value, ``e`` an error message. An aggregate opens a new scope with one row per
(enclosing row, record) and folds its body's rows back with ``GROUP BY p``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from authpairs.tracks.language.expr import ast
from authpairs.tracks.language.expr.result import (
    MAX_DURATION_SECONDS,
    MAX_EPOCH,
    MIN_EPOCH,
    RECORD_FIELD_TYPES,
    EvalResult,
    Outcome,
    TypedFact,
)

_SCHEMA = "CREATE TABLE facts (name TEXT PRIMARY KEY, type TEXT NOT NULL, v)"
_TS_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z"
# True when the text {v} is a canonical UTC time: its form, and a real date (a round trip).
_CANONICAL = (f"({{v}} GLOB '{_TS_GLOB}' AND "
              "strftime('%Y-%m-%dT%H:%M:%SZ', julianday({v})) IS {v})")
_RECORD_V = "json_extract(f.value, '$.v')"

# After loading: classify request strings as timestamps, and mark malformed values as errors.
_NORMALISE = [
    f"""UPDATE facts SET type = 'timestamp'
        WHERE type = 'request-string' AND {_CANONICAL.format(v='v')}""",
    "UPDATE facts SET type = 'string' WHERE type = 'request-string'",
    f"""UPDATE facts SET type = 'error', v = 'not canonical UTC: ' || quote(v)
        WHERE type = 'timestamp' AND (typeof(v) <> 'text' OR NOT {_CANONICAL.format(v='v')})""",
    """UPDATE facts SET type = 'error', v = 'list elements must be strings or numbers'
        WHERE type = 'list' AND (json_valid(v) = 0 OR json_type(v) <> 'array' OR EXISTS (
          SELECT 1 FROM json_each(facts.v) WHERE type NOT IN ('text', 'integer', 'real')))""",
    f"""UPDATE facts SET type = 'error', v = 'record timestamp not canonical UTC'
        WHERE type = 'records' AND EXISTS (
          SELECT 1 FROM json_each(facts.v) r, json_each(r.value) f
          WHERE json_extract(f.value, '$.t') = 'timestamp'
            AND (json_type(f.value, '$.v') IS NOT 'text'
              OR NOT {_CANONICAL.format(v=_RECORD_V)}))""",
]
_AGG_KINDS = {"count": "'string', 'number', 'boolean', 'timestamp', 'duration', 'null'",
              "sum": "'number'", "min": "'number', 'timestamp', 'duration'",
              "max": "'number', 'timestamp', 'duration'"}
# A value of type T outside its range is an error (the limits are shared with evaluator 1).
_OUT_OF_RANGE = {"duration": f"ABS({{v}}) > {MAX_DURATION_SECONDS}",
                 "timestamp": f"({{v}} < {MIN_EPOCH} OR {{v}} > {MAX_EPOCH})"}


def _record_json(value: Any, fields: Mapping[str, str]) -> str | None:
    """Records as stored JSON, or None when a record does not fit the declared fields."""
    if not isinstance(value, list | tuple):
        return None
    rows: list[dict[str, dict[str, Any]]] = []
    for item in value:
        if not isinstance(item, dict):
            return None
        row: dict[str, dict[str, Any]] = {}
        for key, raw in item.items():
            kind = fields.get(key)
            fits = {"string": isinstance(raw, str), "timestamp": isinstance(raw, str),
                    "boolean": isinstance(raw, bool),
                    "number": isinstance(raw, int | float) and not isinstance(raw, bool)}
            if kind not in RECORD_FIELD_TYPES or not (raw is None or fits[str(kind)]):
                return None
            if raw is None:
                row[key] = {"t": "null", "v": None}
            else:
                row[key] = {"t": kind, "v": int(raw) if isinstance(raw, bool) else raw}
        rows.append(row)
    return json.dumps(rows)


def _store(name: str, kind: str, value: Any, rows: list[tuple[str, str, Any]],
           fields: Mapping[str, str] | None = None) -> None:
    """Append one typed row; anything the table cannot represent becomes an 'error' row."""
    if kind == "records":
        stored = _record_json(value, fields or {})
        rows.append((name, "records", stored) if stored is not None else
                    (name, "error", f"{name}: records do not fit their declared fields"))
        return
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
    """Turns an AST into a chain of CTEs (one row per scope row) and collects the parameters."""

    def __init__(self) -> None:
        self.ctes: list[str] = ["s0(k, p, b) AS (SELECT '', NULL, '{}')"]
        self.params: list[Any] = []
        self.names: list[str] = []
        self.scope = "s0"

    def _add(self, sql: str) -> str:
        cte = f"n{len(self.ctes)}"
        self.ctes.append(f"{cte}(k, t, v, e) AS MATERIALIZED ({sql})")
        return cte

    def compile(self, node: ast.Expr) -> str:
        """Compile ``node``; return the name of its CTE."""
        scope = self.scope
        if isinstance(node, ast.Lit):
            return self._literal(node)
        if isinstance(node, ast.ListLit):
            marks = ", ".join("?" for _ in node.items)
            self.params.extend(item.value for item in node.items)
            return self._add(f"SELECT s.k, 'list', json_array({marks}), NULL FROM {scope} s")
        if isinstance(node, ast.Name):
            if node.path not in self.names:
                self.names.append(node.path)
            self.params.append(node.path)
            return self._add(
                "SELECT s.k, f.type, CASE f.type WHEN 'timestamp' THEN unixepoch(f.v) "
                "WHEN 'error' THEN NULL ELSE f.v END, "
                "CASE f.type WHEN 'error' THEN f.v END "
                f"FROM {scope} s LEFT JOIN facts f ON f.name = ?")
        if isinstance(node, ast.Field):
            self.params.extend([f"$.{node.var}.{node.field}.t", f"$.{node.var}.{node.field}.v"])
            return self._add(
                "SELECT k, t, CASE t WHEN 'timestamp' THEN unixepoch(v) ELSE v END, NULL FROM ("
                f"SELECT s.k AS k, json_extract(s.b, ?) AS t, json_extract(s.b, ?) AS v "
                f"FROM {scope} s)")
        if isinstance(node, ast.Aggregate):
            return self._aggregate(node)
        if isinstance(node, ast.Not):
            return self._unary(node.operand, "boolean", "boolean", "NOT a.v",
                               "not expects a boolean")
        if isinstance(node, ast.BoolOp):
            return self._bool(node)
        if isinstance(node, ast.Length):
            return self._unary(node.operand, "list", "number", "json_array_length(a.v)",
                               "length expects a list")
        if isinstance(node, ast.Duration):
            return self._duration(node)
        a, b = self.compile(node.left), self.compile(node.right)
        if isinstance(node, ast.Arith):
            return self._arith(node.op, a, b)
        return self._compare(node.op, a, b)

    def _unary(self, operand: ast.Expr, takes: str, gives: str, value: str,
               message: str) -> str:
        """A strict one-operand operator on a ``takes`` value; ``value`` is SQL over ``a.v``."""
        a = self.compile(operand)
        return self._add(
            f"SELECT a.k, CASE WHEN a.t IS NULL THEN NULL WHEN a.t = '{takes}' THEN '{gives}' "
            f"ELSE 'error' END, CASE WHEN a.t = '{takes}' THEN {value} END, "
            f"CASE WHEN a.t = 'error' THEN a.e WHEN a.t <> '{takes}' "
            f"THEN '{message}, got ' || a.t END FROM {a} a")

    def _duration(self, node: ast.Duration) -> str:
        """``days(n)`` and friends: n times the unit's seconds, typed 'duration'."""
        a = self.compile(node.operand)
        long = _OUT_OF_RANGE["duration"].format(v="x.v")
        return self._add(
            "SELECT x.k, CASE WHEN x.t IS NULL THEN NULL WHEN x.t <> 'number' OR " + long +
            " THEN 'error' ELSE 'duration' END, CASE WHEN x.t = 'number' AND NOT " + long +
            " THEN x.v END, CASE WHEN x.t = 'error' THEN x.e WHEN x.t <> 'number' "
            f"THEN '{node.unit} expects a number, got ' || x.t WHEN " + long +
            " THEN 'duration longer than 10,000 years' END "
            f"FROM (SELECT {a}.k AS k, {a}.t AS t, CASE WHEN {a}.t = 'number' "
            f"THEN {a}.v * {ast.DURATION_UNITS[node.unit]} END AS v, {a}.e AS e FROM {a}) x")

    def _arith(self, op: str, a: str, b: str) -> str:
        """``+``/``-``: numbers, or time arithmetic; the result type is chosen from both types."""
        pairs = [("number", "number", "number"), ("timestamp", "duration", "timestamp"),
                 ("duration", "duration", "duration")]
        pairs.append(("duration", "timestamp", "timestamp") if op == "+" else
                     ("timestamp", "timestamp", "duration"))
        kind = "CASE " + " ".join(f"WHEN {a}.t = '{left}' AND {b}.t = '{right}' THEN '{out}'"
                                  for left, right, out in pairs) + " END"
        bad = " OR ".join(f"(x.rk = '{k}' AND {test.format(v='x.v')})"
                          for k, test in _OUT_OF_RANGE.items())
        return self._add(
            "SELECT x.k, CASE WHEN x.at = 'error' OR x.bt = 'error' THEN 'error' "
            "WHEN x.at IS NULL OR x.bt IS NULL THEN NULL WHEN x.rk IS NULL OR " + bad +
            " THEN 'error' ELSE x.rk END, CASE WHEN x.at IS NOT NULL AND x.bt IS NOT NULL "
            "AND x.rk IS NOT NULL AND NOT (" + bad + ") THEN x.v END, "
            "CASE WHEN x.at = 'error' THEN x.ae WHEN x.bt = 'error' THEN x.be "
            "WHEN x.at IS NULL OR x.bt IS NULL THEN NULL "
            f"WHEN x.rk IS NULL THEN '{op} expects numbers or time and durations, got ' || "
            "x.at || ' and ' || x.bt WHEN " + bad + " THEN 'time arithmetic out of range' END "
            f"FROM (SELECT {a}.k AS k, {a}.t AS at, {b}.t AS bt, {a}.e AS ae, {b}.e AS be, "
            f"{kind} AS rk, CASE WHEN ({kind}) IS NOT NULL THEN {a}.v {op} {b}.v END AS v "
            f"FROM {a} JOIN {b} ON {b}.k = {a}.k) x")

    def _literal(self, node: ast.Lit) -> str:
        scope = self.scope
        if node.kind == "null":
            return self._add(f"SELECT s.k, 'null', NULL, NULL FROM {scope} s")
        if node.kind == "timestamp":
            self.params.append(node.value)
            return self._add(f"SELECT s.k, 'timestamp', unixepoch(?), NULL FROM {scope} s")
        self.params.append(1 if node.value is True else 0 if node.value is False else node.value)
        return self._add(f"SELECT s.k, '{node.kind}', ?, NULL FROM {scope} s")

    def _bool(self, node: ast.BoolOp) -> str:
        a, b = self.compile(node.left), self.compile(node.right)
        op = node.op.upper()
        bad = (f"({a}.t IS NOT NULL AND {a}.t <> 'boolean') OR "
               f"({b}.t IS NOT NULL AND {b}.t <> 'boolean')")
        message = (f"COALESCE({a}.e, {b}.e, '{node.op} expects booleans, got ' || "
                   f"CASE WHEN {a}.t <> 'boolean' THEN {a}.t ELSE {b}.t END)")
        # SQL's own Kleene AND/OR over 0/1/NULL decides; a non-boolean side counts as NULL.
        return self._add(
            "SELECT x.k, CASE WHEN x.v IS NOT NULL THEN 'boolean' WHEN x.bad THEN 'error' END, "
            "x.v, CASE WHEN x.v IS NULL AND x.bad THEN x.msg END FROM ("
            f"SELECT {a}.k AS k, (CASE WHEN {a}.t = 'boolean' THEN {a}.v END) {op} "
            f"(CASE WHEN {b}.t = 'boolean' THEN {b}.v END) AS v, {bad} AS bad, "
            f"{message} AS msg FROM {a} JOIN {b} ON {b}.k = {a}.k) x")

    def _binary(self, a: str, b: str, out_type: str, ok: str, value: str, message: str) -> str:
        """Strict operator: error beats unresolved, unresolved beats a type check."""
        return self._add(
            f"SELECT {a}.k, CASE WHEN {a}.t = 'error' OR {b}.t = 'error' THEN 'error' "
            f"WHEN {a}.t IS NULL OR {b}.t IS NULL THEN NULL WHEN {ok} THEN '{out_type}' "
            f"ELSE 'error' END, "
            f"CASE WHEN {a}.t IS NOT NULL AND {b}.t IS NOT NULL AND {ok} THEN {value} END, "
            f"CASE WHEN {a}.t = 'error' THEN {a}.e WHEN {b}.t = 'error' THEN {b}.e "
            f"WHEN {a}.t IS NULL OR {b}.t IS NULL OR ({ok}) THEN NULL "
            f"ELSE {message} || ', got ' || {a}.t || ' and ' || {b}.t END "
            f"FROM {a} JOIN {b} ON {b}.k = {a}.k")

    def _compare(self, op: str, a: str, b: str) -> str:
        same_kind = (f"(({a}.t = 'string' AND {b}.t = 'string') OR "
                     f"({a}.t IN ('number', 'timestamp', 'duration', 'boolean') "
                     f"AND {b}.t = {a}.t))")
        list_eq = (f"(json_array_length({a}.v) = json_array_length({b}.v) AND NOT EXISTS ("
                   f"SELECT 1 FROM json_each({a}.v) x JOIN json_each({b}.v) y ON x.key = y.key "
                   f"WHERE NOT (x.atom = y.atom AND (x.type = 'text') = (y.type = 'text'))))")
        equal = (f"(CASE WHEN {a}.t = 'null' AND {b}.t = 'null' THEN 1 "
                 f"WHEN {a}.t = 'list' AND {b}.t = 'list' THEN {list_eq} "
                 f"WHEN {same_kind} THEN {a}.v = {b}.v ELSE 0 END)")
        no_records = f"{a}.t <> 'records' AND {b}.t <> 'records'"
        if op in ("==", "!="):
            value = equal if op == "==" else f"NOT {equal}"
            return self._binary(a, b, "boolean", no_records, value, f"'{op} cannot take records'")
        if op == "in":
            member = (f"EXISTS (SELECT 1 FROM json_each({b}.v) y WHERE y.atom = {a}.v AND "
                      f"((y.type = 'text' AND {a}.t = 'string') OR "
                      f"(y.type IN ('integer', 'real') AND {a}.t = 'number')))")
            return self._binary(a, b, "boolean",
                                f"{b}.t = 'list' AND {a}.t NOT IN ('list', 'records')", member,
                                "'in expects a value and a list'")
        if op == "subset":
            subset = (f"NOT EXISTS (SELECT 1 FROM json_each({a}.v) x WHERE NOT EXISTS ("
                      f"SELECT 1 FROM json_each({b}.v) y WHERE y.atom = x.atom AND "
                      f"(y.type = 'text') = (x.type = 'text')))")
            return self._binary(a, b, "boolean", f"{a}.t = 'list' AND {b}.t = 'list'", subset,
                                "'subset expects two lists'")
        orderable = f"{a}.t = {b}.t AND {a}.t IN ('number', 'timestamp', 'duration')"
        return self._binary(a, b, "boolean", orderable, f"{a}.v {op} {b}.v",
                            f"'{op} cannot order these types'")

    def _aggregate(self, node: ast.Aggregate) -> str:
        """Open a scope with one row per record, compile the body in it, fold it back."""
        src, outer = self.compile(node.source), self.scope
        inner = f"s{len(self.ctes)}"
        self.ctes.append(
            f"{inner}(k, p, b) AS MATERIALIZED (SELECT o.k || '/' || j.key, o.k, "
            f"json_set(o.b, '$.{node.var}', json(j.value)) FROM {outer} o "
            f"JOIN {src} x ON x.k = o.k AND x.t = 'records', json_each(x.v) j)")
        self.scope = inner
        try:
            if node.func in ("any", "all"):
                group = self._quantifier_group(node, inner)
            else:
                group = self._strict_group(node, inner)
        finally:
            self.scope = outer
        source_problem = (f"CASE WHEN x.t = 'error' THEN x.e WHEN x.t <> 'records' "
                          f"THEN '{node.func} ranges over records, got ' || x.t END")
        if node.func in ("any", "all"):
            dom = 1 if node.func == "any" else 0
            return self._add(
                "SELECT o.k, CASE WHEN x.t IS NULL THEN NULL WHEN x.t <> 'records' THEN 'error' "
                "WHEN g.hit THEN 'boolean' WHEN g.bad THEN 'error' WHEN g.unres THEN NULL "
                "ELSE 'boolean' END, CASE WHEN x.t = 'records' THEN CASE WHEN g.hit "
                f"THEN {dom} WHEN g.bad OR g.unres THEN NULL ELSE {1 - dom} END END, "
                f"COALESCE({source_problem}, CASE WHEN NOT g.hit AND g.bad THEN g.msg END) "
                f"FROM {outer} o JOIN {src} x ON x.k = o.k LEFT JOIN ({group}) g ON g.k = o.k")
        if node.func in ("count", "sum"):
            out_type = "'number'"
            value = "COALESCE(g.val, 0)"
        else:
            out_type = "COALESCE(g.vt, 'null')"
            value = "g.val"
        return self._add(
            "SELECT o.k, CASE WHEN x.t IS NULL THEN NULL WHEN x.t <> 'records' THEN 'error' "
            "WHEN g.bad THEN 'error' WHEN g.unres THEN NULL "
            f"ELSE {out_type} END, CASE WHEN x.t = 'records' AND NOT COALESCE(g.bad, 0) AND "
            f"NOT COALESCE(g.unres, 0) THEN {value} END, "
            f"COALESCE({source_problem}, CASE WHEN g.bad THEN g.msg END) "
            f"FROM {outer} o JOIN {src} x ON x.k = o.k LEFT JOIN ({group}) g ON g.k = o.k")

    def _quantifier_group(self, node: ast.Aggregate, inner: str) -> str:
        """Per enclosing row: some record decides (hit), some is not boolean, some unresolved."""
        item = self.compile(ast.quantifier_item(node))
        dom = 1 if node.func == "any" else 0
        return (f"SELECT s.p AS k, MAX(i.t = 'boolean' AND i.v = {dom}) AS hit, "
                "MAX(i.t IS NOT NULL AND i.t <> 'boolean') AS bad, MAX(i.t IS NULL) AS unres, "
                "MAX(CASE WHEN i.t = 'error' THEN i.e WHEN i.t <> 'boolean' "
                f"THEN '{node.func} expects booleans, got ' || i.t END) AS msg "
                f"FROM {inner} s JOIN {item} i ON i.k = s.k GROUP BY s.p")

    def _strict_group(self, node: ast.Aggregate, inner: str) -> str:
        """Per enclosing row: any bad or unresolved record, and the fold of the used values."""
        cond = self.compile(node.where if node.where is not None else ast.Lit("boolean", True))
        value = self.compile(node.value) if node.value is not None else cond
        kinds = _AGG_KINDS[node.func] if node.value is not None else "'boolean'"
        status = (f"CASE WHEN c.t IS NULL THEN 'u' WHEN c.t <> 'boolean' THEN 'x' "
                  f"WHEN c.v = 0 THEN 's' WHEN w.t IS NULL THEN 'u' "
                  f"WHEN w.t NOT IN ({kinds}) THEN 'x' ELSE 'use' END")
        message = (f"CASE WHEN c.t = 'error' THEN c.e WHEN c.t <> 'boolean' "
                   f"THEN 'where expects a boolean, got ' || c.t WHEN w.t = 'error' THEN w.e "
                   f"ELSE '{node.func} cannot take a ' || w.t || ' value' END")
        items = f"i{len(self.ctes)}"
        self.ctes.append(
            f"{items}(k, st, vt, vv, msg) AS MATERIALIZED (SELECT s.p, {status}, w.t, w.v, "
            f"{message} FROM {inner} s JOIN {cond} c ON c.k = s.k JOIN {value} w ON w.k = s.k)")
        if node.func == "count" and node.value is None:
            fold = "SUM(st = 'use')"
        elif node.func == "count":
            fold = (f"(SELECT COUNT(*) FROM (SELECT DISTINCT d.vt, d.vv FROM {items} d "
                    f"WHERE d.k = {items}.k AND d.st = 'use'))")
        else:
            fold = f"{node.func.upper()}(CASE WHEN st = 'use' THEN vv END)"
        return (f"SELECT k, MAX(st = 'x') AS bad, MAX(st = 'u') AS unres, "
                f"MAX(CASE WHEN st = 'x' THEN msg END) AS msg, {fold} AS val, "
                f"MAX(CASE WHEN st = 'use' THEN vt END) AS vt FROM {items} GROUP BY k")


def evaluate_sql(expr: ast.Expr, facts: Mapping[str, TypedFact],
                 request: Mapping[str, Any]) -> EvalResult:
    """Evaluate ``expr`` in a fresh in-memory SQLite database loaded with facts and request."""
    rows: list[tuple[str, str, Any]] = []
    for name, fact in facts.items():
        _store(name, fact.type, fact.value, rows, fact.fields)
    for key, value in request.items():
        _request_rows(f"request.{key}", value, rows)
    compiler = _Compiler()
    root = compiler.compile(expr)
    query = "WITH " + ", ".join(compiler.ctes) + f" SELECT t, v, e FROM {root}"
    with sqlite3.connect(":memory:") as db:
        db.execute("PRAGMA automatic_index = OFF")  # tiny CTEs: an index costs more than a scan
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
        return EvalResult(Outcome.UNRESOLVED,
                          "missing: " + (", ".join(missing) or "a record field"))
    if kind != "boolean":
        return EvalResult(Outcome.ERROR, f"expression yields {kind}, not a boolean")
    return EvalResult(Outcome.TRUE if value else Outcome.FALSE)
