"""Evaluator 1: a tree-walking interpreter with three-valued (Kleene) logic.

Semantics (the reference for evaluator 2, :mod:`.sqlite_eval`):

* A name that is neither a fact nor a present request field is *unresolved*. Any operator with an
  unresolved operand is unresolved, except ``and``/``or``: ``false and X`` is false and
  ``true or X`` is true whatever ``X`` is (also when ``X`` is an error).
* An explicit ``null`` is a value: ``null == null`` is true, ``null == x`` is false.
* ``==``/``!=`` compare any two values; values of different types are unequal (numbers compare
  numerically, lists element by element).
* Errors: ordered comparisons (``< <= > >=``) other than number/number, timestamp/timestamp or
  duration/duration;
  ``+``/``-`` on non-numbers; ``and``/``or``/``not`` on non-booleans; ``in`` without a list on the
  right (or with a list on the left); ``subset`` without two lists; ``length`` of a non-list; a
  fact whose value does not match its declared type. An error beats unresolved.
* Request strings in canonical UTC form (``YYYY-MM-DDTHH:MM:SSZ``) are timestamps.
* Durations: ``minutes(n)``, ``hours(n)``, ``days(n)``, ``weeks(n)`` of a number ``n`` are
  durations (``n`` times 60, 3,600, 86,400 or 604,800 seconds; fractions and negatives allowed).
  A time plus or minus a duration is a time, a duration plus a time is a time, two durations
  add or subtract to a duration, and a time minus a time is the duration between them.
  Durations compare with durations (``==`` and ordered). Errors: a duration of a non-number, any
  other mix (a number plus a duration, a time plus a time, ...), a duration longer than
  :data:`~.result.MAX_DURATION_SECONDS` and a time outside years 1..9999.
* Records (a ``records`` fact: a list of mappings with declared field types) are read only by
  the aggregates; any other operator on records is an error. A field absent from a record is
  unresolved; an explicit null field is the value null.
* ``any``/``all`` fold the per-record boolean of :func:`~.ast.quantifier_item` with ``or`` /
  ``and`` (so a deciding record wins over errors and unresolved ones); over no records they are
  false / true. ``count``/``sum``/``min``/``max`` are strict: a record whose ``where`` is an error
  (or not boolean) makes the result an error, one whose ``where`` is unresolved makes it
  unresolved, and for each passing record ``value`` must be determinate and of the right kind
  (count: a scalar; sum: number; min/max: number or timestamp -- a record field has
  one declared type, so the values of one aggregate never mix kinds). ``count``
  without a value counts passing records, with one the distinct values; ``sum`` of none is 0,
  ``min``/``max`` of none is null.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from authpairs.cases.canonical import parse_utc
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


@dataclass(frozen=True)
class _Val:
    """A resolved value: kind is string/number/boolean/timestamp/null/list."""

    kind: str
    data: Any


@dataclass(frozen=True)
class _Unresolved:
    """A value that depends on a missing name."""


@dataclass(frozen=True)
class _Err:
    """A type or value error with its message."""

    message: str


_Result = _Val | _Unresolved | _Err
_UNRESOLVED = _Unresolved()
_TRUE = _Val("boolean", True)
_VALUE_KINDS = {"count": ("string", "number", "boolean", "timestamp", "duration", "null"),
                "sum": ("number",), "min": ("number", "timestamp", "duration"),
                "max": ("number", "timestamp", "duration")}
#: (operator, left kind, right kind) -> result kind of time arithmetic.
_TIME_ARITH = {("+", "timestamp", "duration"): "timestamp",
               ("-", "timestamp", "duration"): "timestamp",
               ("+", "duration", "timestamp"): "timestamp",
               ("+", "duration", "duration"): "duration",
               ("-", "duration", "duration"): "duration",
               ("-", "timestamp", "timestamp"): "duration"}
_ORDERED = ("number", "timestamp", "duration")


def _epoch(text: Any) -> int | None:
    moment = parse_utc(text)
    return None if moment is None else int(moment.timestamp())


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _list_value(items: Any, where: str) -> _Result:
    if not isinstance(items, list | tuple):
        return _Err(f"{where}: list expected")
    elements: list[tuple[str, Any]] = []
    for item in items:
        if isinstance(item, str):
            elements.append(("string", item))
        elif _is_number(item):
            elements.append(("number", item))
        else:
            return _Err(f"{where}: list elements must be strings or numbers, got {item!r}")
    return _Val("list", tuple(elements))


def _field_value(where: str, kind: str, value: Any) -> _Val | _Err:
    if value is None:
        return _Val("null", None)
    if kind == "timestamp":
        epoch = _epoch(value)
        return _Err(f"{where}: {value!r} is not canonical UTC") if epoch is None else \
            _Val("timestamp", epoch)
    ok = {"string": isinstance(value, str), "number": _is_number(value),
          "boolean": isinstance(value, bool)}.get(kind, False)
    return _Val(kind, value) if ok else \
        _Err(f"{where}: value {value!r} does not match type {kind!r}")


def _records_value(name: str, fact: TypedFact) -> _Result:
    fields = fact.fields or {}
    if not isinstance(fact.value, list | tuple):
        return _Err(f"fact {name}: records need a list of mappings")
    records: list[dict[str, _Val]] = []
    for index, item in enumerate(fact.value):
        if not isinstance(item, dict):
            return _Err(f"fact {name}[{index}]: a record must be a mapping")
        record: dict[str, _Val] = {}
        for key, raw in item.items():
            kind = fields.get(key)
            if kind not in RECORD_FIELD_TYPES:
                return _Err(f"fact {name}[{index}].{key}: field not declared with a type")
            value = _field_value(f"fact {name}[{index}].{key}", str(kind), raw)
            if isinstance(value, _Err):
                return value
            record[key] = value
        records.append(record)
    return _Val("records", tuple(records))


def _fact_value(name: str, fact: TypedFact) -> _Result:
    kind, value = fact.type, fact.value
    if kind == "records":
        return _records_value(name, fact)
    if kind == "list":
        return _list_value(value, f"fact {name}")
    if (value is None) != (kind == "null"):
        return _Err(f"fact {name}: value {value!r} does not match type {kind!r}")
    return _field_value(f"fact {name}", kind, value)


def _request_value(name: str, value: Any) -> _Result:
    if value is None:
        return _Val("null", None)
    if isinstance(value, bool):
        return _Val("boolean", value)
    if _is_number(value):
        return _Val("number", value)
    if isinstance(value, str):
        epoch = _epoch(value)
        return _Val("string", value) if epoch is None else _Val("timestamp", epoch)
    if isinstance(value, list):
        return _list_value(value, name)
    return _Err(f"{name}: unsupported value {type(value).__name__}")


class Interpreter:
    """Evaluates ASTs against typed facts and a request (a plain dict of request fields)."""

    def __init__(self, facts: Mapping[str, TypedFact], request: Mapping[str, Any]) -> None:
        self._facts = facts
        self._request = request
        self._env: dict[str, dict[str, _Val]] = {}
        self.missing: list[str] = []

    def _lookup(self, path: str) -> _Result:
        if path.startswith("request."):
            node: Any = self._request
            for part in path.split(".")[1:]:
                if not isinstance(node, Mapping) or part not in node:
                    return self._miss(path)
                node = node[part]
            return _request_value(path, node)
        fact = self._facts.get(path)
        return self._miss(path) if fact is None else _fact_value(path, fact)

    def _miss(self, path: str) -> _Unresolved:
        if path not in self.missing:
            self.missing.append(path)
        return _UNRESOLVED

    def eval(self, node: ast.Expr) -> _Result:
        """Evaluate one node."""
        if isinstance(node, ast.Lit):
            if node.kind == "timestamp":
                epoch = _epoch(str(node.value))
                return _Err(f"bad timestamp @{node.value}") if epoch is None else \
                    _Val("timestamp", epoch)
            return _Val(node.kind, node.value)
        if isinstance(node, ast.ListLit):
            return _list_value([item.value for item in node.items], "list literal")
        if isinstance(node, ast.Name):
            return self._lookup(node.path)
        if isinstance(node, ast.Not):
            return _unary(self.eval(node.operand), "boolean", "'not' expects a boolean",
                          lambda data: _Val("boolean", not data))
        if isinstance(node, ast.BoolOp):
            return _bool_op(node.op, self.eval(node.left), self.eval(node.right))
        if isinstance(node, ast.Length):
            return _unary(self.eval(node.operand), "list", "length() expects a list",
                          lambda data: _Val("number", len(data)))
        if isinstance(node, ast.Duration):
            seconds = ast.DURATION_UNITS[node.unit]
            return _unary(self.eval(node.operand), "number", f"{node.unit}() expects a number",
                          lambda data: _in_range("duration", data * seconds))
        if isinstance(node, ast.Field):
            record = self._env[node.var]
            return record[node.field] if node.field in record else \
                self._miss(f"{node.var}.{node.field}")
        if isinstance(node, ast.Aggregate):
            return self._aggregate(node)
        left, right = self.eval(node.left), self.eval(node.right)
        if isinstance(left, _Err):
            return left
        if isinstance(right, _Err):
            return right
        if isinstance(left, _Unresolved) or isinstance(right, _Unresolved):
            return _UNRESOLVED
        if isinstance(node, ast.Arith):
            return _arith(node.op, left, right)
        return _compare(node.op, left, right)


    def _in(self, var: str, record: dict[str, _Val], node: ast.Expr) -> _Result:
        """Evaluate ``node`` with ``var`` bound to ``record``."""
        saved = self._env
        self._env = {**saved, var: record}
        try:
            return self.eval(node)
        finally:
            self._env = saved

    def _aggregate(self, node: ast.Aggregate) -> _Result:
        source = self.eval(node.source)
        if not isinstance(source, _Val):
            return source
        if source.kind != "records":
            return _Err(f"{node.func}() ranges over records, got {source.kind}")
        if node.func in ("any", "all"):
            op, item = ("or" if node.func == "any" else "and"), ast.quantifier_item(node)
            folded: _Result = _Val("boolean", node.func == "all")
            for record in source.data:
                folded = _bool_op(op, folded, self._in(node.var, record, item))
            return folded
        error: _Err | None = None
        unresolved = False
        used: list[_Val] = []
        for record in source.data:
            cond = _TRUE if node.where is None else self._in(node.var, record, node.where)
            if isinstance(cond, _Unresolved):
                unresolved = True
            elif isinstance(cond, _Err) or cond.kind != "boolean":
                error = error or (cond if isinstance(cond, _Err) else
                                  _Err(f"'where' expects a boolean, got {cond.kind}"))
            elif cond.data and node.value is None:
                used.append(cond)
            elif cond.data and node.value is not None:
                value = self._in(node.var, record, node.value)
                if isinstance(value, _Unresolved):
                    unresolved = True
                elif isinstance(value, _Err) or value.kind not in _VALUE_KINDS[node.func]:
                    error = error or (value if isinstance(value, _Err) else _Err(
                        f"{node.func}() cannot take a {value.kind} value"))
                else:
                    used.append(value)
        if error is not None:
            return error
        return _UNRESOLVED if unresolved else _fold(node.func, node.value is not None, used)


def _fold(func: str, has_value: bool, used: list[_Val]) -> _Result:
    """The aggregate of the passing records' values (all determinate, of allowed kinds)."""
    if func == "count":
        return _Val("number", len({(v.kind, v.data) for v in used}) if has_value else len(used))
    if func == "sum":
        return _Val("number", sum(v.data for v in used))
    if not used:
        return _Val("null", None)
    pick = min if func == "min" else max
    return _Val(used[0].kind, pick(v.data for v in used))


def _unary(value: _Result, takes: str, message: str,
           apply: Callable[[Any], _Result]) -> _Result:
    """A strict one-operand operator: an error or unresolved operand passes through, one of
    another kind than ``takes`` is an error, and ``apply`` maps the operand's data."""
    if not isinstance(value, _Val):
        return value
    if value.kind != takes:
        return _Err(f"{message}, got {value.kind}")
    return apply(value.data)


def _bool_op(op: str, left: _Result, right: _Result) -> _Result:
    dominant = op == "or"  # the value that decides the result alone
    unresolved = False
    error: _Err | None = None
    for side in (left, right):
        if isinstance(side, _Val) and side.kind == "boolean":
            if side.data is dominant:
                return _Val("boolean", dominant)
        elif isinstance(side, _Unresolved):
            unresolved = True
        else:
            error = error or (side if isinstance(side, _Err)
                              else _Err(f"'{op}' expects booleans, got {side.kind}"))
    if error is not None:
        return error
    return _UNRESOLVED if unresolved else _Val("boolean", not dominant)


def _in_range(kind: str, seconds: Any) -> _Result:
    """A duration or time value, or the error when it lies outside the supported range."""
    if kind == "duration" and not abs(seconds) <= MAX_DURATION_SECONDS:
        return _Err(f"a duration of {seconds} seconds is longer than 10,000 years")
    if kind == "timestamp" and not MIN_EPOCH <= seconds <= MAX_EPOCH:
        return _Err("time arithmetic leaves the years 1..9999")
    return _Val(kind, seconds)


def _arith(op: str, left: _Val, right: _Val) -> _Result:
    kind = "number" if left.kind == right.kind == "number" else \
        _TIME_ARITH.get((op, left.kind, right.kind))
    if kind is None:
        return _Err(f"'{op}' expects two numbers, a time and a duration, two durations"
                    f"{' or two times' if op == '-' else ''}, got {left.kind} and {right.kind}")
    total = left.data + right.data if op == "+" else left.data - right.data
    return _Val("number", total) if kind == "number" else _in_range(kind, total)


def _equal(left: _Val, right: _Val) -> bool:
    if left.kind != right.kind:
        return False
    if left.kind == "list":
        return len(left.data) == len(right.data) and all(
            a[0] == b[0] and a[1] == b[1] for a, b in zip(left.data, right.data, strict=True))
    return bool(left.data == right.data)


def _member(element: tuple[str, Any], items: tuple[tuple[str, Any], ...]) -> bool:
    return any(element[0] == kind and element[1] == data for kind, data in items)


def _compare(op: str, left: _Val, right: _Val) -> _Result:
    if "records" in (left.kind, right.kind):
        return _Err(f"'{op}' cannot take records (use any/all/count/sum/min/max)")
    if op in ("==", "!="):
        same = _equal(left, right)
        return _Val("boolean", same if op == "==" else not same)
    if op == "in":
        if right.kind != "list" or left.kind == "list":
            return _Err(f"'in' expects a value and a list, got {left.kind} and {right.kind}")
        return _Val("boolean", _member((left.kind, left.data), right.data))
    if op == "subset":
        if left.kind != "list" or right.kind != "list":
            return _Err(f"'subset' expects two lists, got {left.kind} and {right.kind}")
        return _Val("boolean", all(_member(item, right.data) for item in left.data))
    if left.kind != right.kind or left.kind not in _ORDERED:
        return _Err(f"'{op}' cannot order {left.kind} and {right.kind}")
    a, b = left.data, right.data
    result = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    return _Val("boolean", result)


def interpret(expr: ast.Expr, facts: Mapping[str, TypedFact],
              request: Mapping[str, Any]) -> EvalResult:
    """Evaluate ``expr``; true/false are determinate, unresolved names the missing inputs."""
    machine = Interpreter(facts, request)
    value = machine.eval(expr)
    if isinstance(value, _Err):
        return EvalResult(Outcome.ERROR, value.message)
    if isinstance(value, _Unresolved):
        return EvalResult(Outcome.UNRESOLVED, "missing: " + ", ".join(machine.missing))
    if value.kind != "boolean":
        return EvalResult(Outcome.ERROR, f"expression yields {value.kind}, not a boolean")
    return EvalResult(Outcome.TRUE if value.data else Outcome.FALSE)
