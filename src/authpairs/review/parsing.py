"""Strict parsing of reviewer output, shared by every JSON interface.

A response is accepted only as exactly one complete, finite JSON object, either as the whole
(whitespace-trimmed) text or as the whole content of exactly one Markdown code fence. Everything
else is *unavailable* with a reason code: duplicate keys, NaN/Infinity, extra prose, several
objects, a generation cut at the token limit, and so on. The parser never applies a permission rule:
it only checks the shape of the answer against the interface's JSON schema.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import jsonschema

from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome

_FENCE = re.compile(r"\A```(?:json|JSON)?[ \t]*\n(?P<body>.*?)\n?```\Z", re.DOTALL)
_ANY_FENCE = re.compile(r"```")


class _Unavailable(Exception):
    def __init__(self, reason: ReasonCode, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Unavailable(ReasonCode.DUPLICATE_KEY, f"duplicate key {key!r}")
        result[key] = value
    return result


def _reject_constant(name: str) -> float:
    raise _Unavailable(ReasonCode.NON_FINITE, f"non-finite number {name}")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Unavailable(ReasonCode.NON_FINITE, f"number {text} is not finite")
    return value


def _extract_payload(text: str) -> str:
    """Return the JSON text of the single object, or raise :class:`_Unavailable`."""
    stripped = text.strip()
    if not stripped:
        raise _Unavailable(ReasonCode.EMPTY, "empty response")
    fence = _FENCE.match(stripped)
    if fence is not None:
        body = fence.group("body")
        if _ANY_FENCE.search(body):
            raise _Unavailable(ReasonCode.MULTIPLE_OBJECTS, "more than one code fence")
        return body.strip()
    if stripped.startswith("{"):
        return stripped
    if "{" in stripped or "```" in stripped:
        raise _Unavailable(ReasonCode.EXTRA_PROSE, "text outside the JSON object")
    raise _Unavailable(ReasonCode.NOT_JSON, "no JSON object in the response")


def _decode_single_object(payload: str) -> dict[str, Any]:
    decoder = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_reject_constant,
                               parse_float=_finite_float)
    try:
        value, end = decoder.raw_decode(payload)
    except json.JSONDecodeError as exc:
        raise _Unavailable(ReasonCode.NOT_JSON, f"invalid JSON: {exc.msg}") from exc
    rest = payload[end:].strip()
    if rest:
        if rest.startswith(("{", "[")):
            raise _Unavailable(ReasonCode.MULTIPLE_OBJECTS, "more than one JSON value")
        raise _Unavailable(ReasonCode.EXTRA_PROSE, "text after the JSON object")
    if not isinstance(value, dict):
        raise _Unavailable(ReasonCode.NOT_OBJECT, "the JSON value is not an object")
    return value


_SCHEMA_REASONS = {
    "required": ReasonCode.MISSING_FIELD,
    "additionalProperties": ReasonCode.EXTRA_FIELD,
    "type": ReasonCode.WRONG_TYPE,
}


def _check_schema(value: dict[str, Any], schema: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(schema)
    priority = list(_SCHEMA_REASONS)
    errors = sorted(validator.iter_errors(value), key=lambda e: (
        len(e.absolute_path),
        priority.index(str(e.validator)) if e.validator in priority else len(priority)))
    if errors:
        error = errors[0]
        reason = _SCHEMA_REASONS.get(str(error.validator), ReasonCode.INVALID_VALUE)
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise _Unavailable(reason, f"{where}: {error.message}")


def parse_json_decision(text: str | None, finish_reason: str | None,
                        schema: dict[str, Any]) -> ReviewOutcome:
    """Parse a reviewer's text into a :class:`ReviewOutcome` under ``schema``.

    The object must carry ``decision`` in ALLOW/BLOCK/UNKNOWN (enforced by the schema); a
    ``checks`` list, when present, is returned with the outcome.
    """
    if finish_reason == "length":
        return ReviewOutcome.unavailable(ReasonCode.LENGTH, "generation stopped at max_tokens")
    if finish_reason not in (None, "stop", "eos", "end_turn"):
        return ReviewOutcome.unavailable(ReasonCode.FILTERED, f"finish_reason {finish_reason}")
    try:
        value = _decode_single_object(_extract_payload(text or ""))
        _check_schema(value, schema)
    except _Unavailable as exc:
        return ReviewOutcome.unavailable(exc.reason, exc.detail)
    checks = value.get("checks")
    return ReviewOutcome.decided(Decision(value["decision"]),
                                 checks=checks if isinstance(checks, list) else None)


def parse_json_object(text: str | None) -> dict[str, Any] | ReviewOutcome:
    """The single strict JSON object in ``text`` (same rules as :func:`parse_json_decision`),
    or an unavailable outcome saying why not. For native formats with their own JSON verdicts."""
    try:
        return _decode_single_object(_extract_payload(text or ""))
    except _Unavailable as exc:
        return ReviewOutcome.unavailable(exc.reason, exc.detail)


__all__ = ["parse_json_decision", "parse_json_object"]
