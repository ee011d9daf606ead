"""An independent checker of the documented JSON answer formats (for the property tests).

Written from the documentation (docs/interfaces, ``authpairs.review.parsing`` module docstring and
the schemas' stated constraints), deliberately without the parser's code or jsonschema: an answer
conforms when, after trimming, it is exactly one JSON object -- the whole text, or the whole body
of exactly one ```/```json fence -- with no duplicate keys, no NaN/Infinity, only valid Unicode,
the generation stopped cleanly, and the object has exactly the documented fields.
"""

from __future__ import annotations

import json
from typing import Any

CLEAN = {None, "stop", "eos", "end_turn", "stop_sequence"}
DECISIONS = ("ALLOW", "BLOCK", "UNKNOWN")


class _Bad(Exception):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _Bad("duplicate")
    return dict(pairs)


def _constant(name: str) -> Any:
    raise _Bad(name)


def _unicode_ok(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict):
        return all(_unicode_ok(k) and _unicode_ok(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_unicode_ok(v) for v in value)
    return True


def _body(text: str) -> str | None:
    t = text.strip()
    if not t.startswith("```"):
        return t
    first, newline, rest = t.partition("\n")
    if not newline or first.rstrip(" \t") not in ("```", "```json", "```JSON"):
        return None
    if not rest.endswith("```"):
        return None
    body = rest[:-3]
    if "```" in body:
        return None
    return body


def _short_str(value: Any, limit: int) -> bool:
    return isinstance(value, str) and len(value) <= limit


def _direct_ok(obj: dict[str, Any]) -> bool:
    return set(obj) == {"decision"} and obj["decision"] in DECISIONS


def _structured_ok(obj: dict[str, Any]) -> bool:
    if set(obj) != {"checks", "decision"} or obj["decision"] not in DECISIONS:
        return False
    checks = obj["checks"]
    if not isinstance(checks, list) or not 1 <= len(checks) <= 12:
        return False
    for check in checks:
        if not isinstance(check, dict) or set(check) != {"requirement", "finding", "evidence"}:
            return False
        if not (_short_str(check["requirement"], 200) and _short_str(check["finding"], 200)):
            return False
        evidence = check["evidence"]
        if not isinstance(evidence, list) or len(evidence) > 4:
            return False
        if not all(_short_str(e, 160) for e in evidence):
            return False
    return True


def conforming_decision(text: str | None, finish: str | None, kind: str) -> str | None:
    """The decision a conforming answer carries, or None when the answer does not conform.

    ``kind`` is ``"direct"`` (``{"decision": ...}``) or ``"structured"`` (decision + checks).
    """
    if finish not in CLEAN or text is None or len(text) > 1_000_000:
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    body = _body(text)
    if body is None or not body.strip():
        return None
    try:
        value = json.loads(body, object_pairs_hook=_pairs, parse_constant=_constant)
    except (_Bad, ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or not _unicode_ok(value):
        return None
    ok = _direct_ok(value) if kind == "direct" else _structured_ok(value)
    return str(value["decision"]) if ok else None
