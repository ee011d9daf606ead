"""Strict parsing of reviewer output, shared by every JSON interface.

A response is accepted only as exactly one complete, finite JSON object, either as the whole
(whitespace-trimmed) text or as the whole content of exactly one Markdown code fence. Everything
else is *unavailable* with a reason code: duplicate keys, NaN/Infinity, extra prose, several
objects, a top-level array (``not_object``, fenced or not), a generation cut at the token limit,
and so on. The parser never applies a permission rule: it only checks the shape of the answer
against the interface's JSON schema.

The parser never raises, whatever the text: oversized responses and integers beyond
:data:`MAX_INT_DIGITS` digits are ``too_large``, nesting deeper than :data:`MAX_DEPTH` is
``too_deep``, and lone surrogates are ``invalid_text``.

Helpers shared by every interface, native guardrail formats included: :func:`finish_outcome`
(one mapping of finish reasons), :func:`text_problem` (the text cap, checked before any other
work), :func:`ascii_lower` (case folding of ASCII letters only, so that no Unicode look-alike
becomes a label), :func:`guarded` (a library that raises, even a ``BaseException`` such as a
pyo3 ``PanicException``, gives an unavailable outcome) and :func:`parse_bare_json` (the strict
decoder for JSON that must be bare, such as an HTTP guardrail's reply).
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Callable
from typing import Any, TypeVar

import jsonschema

from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome

_FENCE = re.compile(r"\A```(?:json|JSON)?[ \t]*\n(?P<body>.*?)\n?```\Z", re.DOTALL)

MAX_RESPONSE_CHARS = 1_000_000
"""Longer responses are unavailable (``too_large``) without being decoded."""
MAX_INT_DIGITS = 100
"""Integers with more digits are unavailable (``too_large``)."""
MAX_DEPTH = 64
"""Deeper nesting of arrays/objects is unavailable (``too_deep``)."""

CLEAN_STOPS = frozenset({None, "stop", "eos", "end_turn", "stop_sequence"})
"""Finish reasons of a complete generation (OpenAI, llama.cpp, Anthropic spellings). A missing
finish reason (None) counts as a clean stop: the text must then still be one whole answer, so a
cut-off answer is unavailable by its shape."""
LENGTH_STOPS = frozenset({"length", "max_tokens", "model_length"})
"""Finish reasons of a generation cut at the token limit."""
FATAL = (KeyboardInterrupt, SystemExit, asyncio.CancelledError, GeneratorExit)
"""Exceptions :func:`guarded` (and the run's last line of defence) never swallow: they stop the
process or the task on purpose."""

T = TypeVar("T")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


class _Unavailable(Exception):
    def __init__(self, reason: ReasonCode, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def finish_outcome(finish_reason: str | None, *, length_ok: bool = False
                   ) -> ReviewOutcome | None:
    """The unavailable outcome a finish reason implies, or None for a clean stop.

    ``length``/``max_tokens``/``model_length`` -> ``length`` (None instead when ``length_ok``:
    a format whose whole label may end exactly at the limit, the caller then checks the text);
    ``stop``/``stop_sequence``/``eos``/``end_turn`` or none -> clean; anything else
    (``content_filter``, ``tool_calls``, ...) -> ``filtered``. Every interface's parser, native
    guardrail formats included, applies this first.
    """
    if finish_reason in LENGTH_STOPS:
        if length_ok:
            return None
        return ReviewOutcome.unavailable(ReasonCode.LENGTH, "generation stopped at max_tokens")
    if finish_reason not in CLEAN_STOPS:
        return ReviewOutcome.unavailable(ReasonCode.FILTERED,
                                         f"finish_reason {str(finish_reason)[:40]}")
    return None


def ascii_lower(text: str) -> str:
    """``text`` with the ASCII letters A-Z lower-cased and every other character unchanged.

    Labels are compared after this folding only: ``str.lower``/``casefold`` would turn Unicode
    look-alikes (KELVIN SIGN, LONG S via ``upper``) into ASCII letters.
    """
    return text.translate(_ASCII_LOWER)


def ascii_upper(text: str) -> str:
    """``text`` with the ASCII letters a-z upper-cased and every other character unchanged."""
    return text.translate(_ASCII_UPPER)


def guarded(call: Callable[[], T], what: str) -> T | ReviewOutcome:
    """``call()``, or an unavailable outcome (``parser_error``) when it raises anything but
    :data:`FATAL`: a library's ``Exception`` or ``BaseException`` (a Rust panic raised through
    pyo3 is a ``BaseException``) never escapes a parser."""
    try:
        return call()
    except FATAL:
        raise
    except BaseException as exc:  # pyo3 panics derive from BaseException, not Exception
        return ReviewOutcome.unavailable(ReasonCode.PARSER_ERROR,
                                         f"{what} raised {type(exc).__name__}")


def text_problem(text: str, limit: int = MAX_RESPONSE_CHARS) -> ReviewOutcome | None:
    """The unavailable outcome for text no parser should read: longer than ``limit``
    characters (``too_large``, decided by ``len`` alone, before anything reads the text) or not
    valid Unicode (``invalid_text``)."""
    if len(text) > limit:
        return ReviewOutcome.unavailable(ReasonCode.TOO_LARGE,
                                         f"response longer than {limit} characters")
    if not _valid_unicode(text):
        return ReviewOutcome.unavailable(ReasonCode.INVALID_TEXT,
                                         "response holds lone surrogates")
    return None


def _valid_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Unavailable(ReasonCode.DUPLICATE_KEY, f"duplicate key {key[:40]!r}")
        result[key] = value
    return result


def _reject_constant(name: str) -> float:
    raise _Unavailable(ReasonCode.NON_FINITE, f"non-finite number {name}")


def _finite_float(text: str) -> float:
    if len(text) > MAX_INT_DIGITS * 4:
        raise _Unavailable(ReasonCode.TOO_LARGE, f"number with {len(text)} characters")
    value = float(text)
    if not math.isfinite(value):
        raise _Unavailable(ReasonCode.NON_FINITE, f"number {text[:40]} is not finite")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Unavailable(ReasonCode.TOO_LARGE, f"integer with {len(text)} digits")
    return int(text)


_STRING = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)', re.DOTALL)
"""A JSON string literal, or an unterminated one running to the end of the text."""
_BRACKETS = re.compile(r"[\[\]{}]")


def _too_deep(payload: str) -> bool:
    """True when arrays/objects nest deeper than :data:`MAX_DEPTH` outside strings.

    Strings are cut out by a regular expression and only the brackets left are walked, so a
    long answer costs a few C-level scans rather than a Python step per character.
    """
    if payload.count("{") + payload.count("[") <= MAX_DEPTH:
        return False  # too few brackets, even counting those inside strings
    depth = 0
    for bracket in _BRACKETS.findall(_STRING.sub("", payload)):
        if bracket in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        else:
            depth -= 1
    return False


def _extract_payload(text: str) -> str:
    """Return the JSON text of the single value, or raise :class:`_Unavailable`."""
    stripped = text.strip()
    if not stripped:
        raise _Unavailable(ReasonCode.EMPTY, "empty response")
    fence = _FENCE.match(stripped)
    if fence is not None:
        body = fence.group("body")
        if "```" in body:
            raise _Unavailable(ReasonCode.MULTIPLE_OBJECTS, "more than one code fence")
        return body.strip()
    if stripped.startswith(("{", "[")):
        return stripped
    if "{" in stripped or "```" in stripped:
        raise _Unavailable(ReasonCode.EXTRA_PROSE, "text outside the JSON object")
    raise _Unavailable(ReasonCode.NOT_JSON, "no JSON object in the response")


def _strings_valid(value: Any) -> bool:
    """True when every string (keys included) in a decoded value is valid Unicode: its JSON
    text, non-ASCII characters written as they are, encodes as UTF-8."""
    return _valid_unicode(json.dumps(value, ensure_ascii=False))


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_reject_constant,
                            parse_float=_finite_float, parse_int=_bounded_int)
"""One strict decoder, reused (it keeps no state between calls)."""


def _decode_value(payload: str) -> tuple[Any, str]:
    """The first JSON value of ``payload`` (read with the strict decoder) and the text after it;
    :class:`_Unavailable` when there is none."""
    if _too_deep(payload):
        raise _Unavailable(ReasonCode.TOO_DEEP, f"nesting deeper than {MAX_DEPTH}")
    try:
        value, end = _DECODER.raw_decode(payload)
    except json.JSONDecodeError as exc:
        raise _Unavailable(ReasonCode.NOT_JSON, f"invalid JSON: {exc.msg}") from exc
    except RecursionError as exc:
        raise _Unavailable(ReasonCode.TOO_DEEP, "nesting too deep to decode") from exc
    except ValueError as exc:  # e.g. an integer beyond Python's digit limit
        raise _Unavailable(ReasonCode.TOO_LARGE, f"unreadable number: {exc}") from exc
    return value, payload[end:]


def _decode_single_object(payload: str) -> dict[str, Any]:
    value, after = _decode_value(payload)
    rest = after.strip()
    if rest:
        if rest.startswith(("{", "[")):
            raise _Unavailable(ReasonCode.MULTIPLE_OBJECTS, "more than one JSON value")
        raise _Unavailable(ReasonCode.EXTRA_PROSE, "text after the JSON object")
    if not isinstance(value, dict):
        raise _Unavailable(ReasonCode.NOT_OBJECT, "the JSON value is not an object")
    if not _strings_valid(value):
        raise _Unavailable(ReasonCode.INVALID_TEXT, "a string holds lone surrogates")
    return value


_SCHEMA_REASONS = {
    "required": ReasonCode.MISSING_FIELD,
    "additionalProperties": ReasonCode.EXTRA_FIELD,
    "type": ReasonCode.WRONG_TYPE,
}


_VALIDATORS: dict[int, tuple[dict[str, Any], jsonschema.Draft202012Validator]] = {}

def _validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    """One compiled validator per answer schema (building one per answer costs more than the
    validation itself)."""
    cached = _VALIDATORS.get(id(schema))
    if cached is None or cached[0] is not schema:
        cached = (schema, jsonschema.Draft202012Validator(schema))
        _VALIDATORS[id(schema)] = cached
    return cached[1]


def _check_schema(value: dict[str, Any], schema: dict[str, Any]) -> None:
    """Raise :class:`_Unavailable` for the first (shallowest, most telling) schema error."""
    validator = _validator(schema)
    priority = list(_SCHEMA_REASONS)
    error = min(validator.iter_errors(value), default=None, key=lambda e: (
        len(e.absolute_path),
        priority.index(str(e.validator)) if e.validator in priority else len(priority)))
    if error is not None:
        reason = _SCHEMA_REASONS.get(str(error.validator), ReasonCode.INVALID_VALUE)
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise _Unavailable(reason, f"{where[:80]}: {error.message[:200]}")


def parse_json_decision(text: str | None, finish_reason: str | None,
                        schema: dict[str, Any]) -> ReviewOutcome:
    """Parse a reviewer's text into a :class:`ReviewOutcome` under ``schema``; never raises.

    The object must carry ``decision`` in ALLOW/BLOCK/UNKNOWN (enforced by the schema); a
    ``checks`` list, when present, is returned with the outcome.
    """
    stopped = finish_outcome(finish_reason)
    if stopped is not None:
        return stopped
    value = parse_json_object(text)
    if isinstance(value, ReviewOutcome):
        return value
    try:
        _check_schema(value, schema)
        checks = value.get("checks")
        return ReviewOutcome.decided(Decision(value["decision"]),
                                     checks=checks if isinstance(checks, list) else None)
    except _Unavailable as exc:
        return ReviewOutcome.unavailable(exc.reason, exc.detail)
    except (RecursionError, ValueError, TypeError, KeyError) as exc:
        return ReviewOutcome.unavailable(ReasonCode.INVALID_VALUE,
                                         f"unreadable answer: {type(exc).__name__}")


def parse_json_object(text: str | None) -> dict[str, Any] | ReviewOutcome:
    """The single strict JSON object in ``text`` (same rules as :func:`parse_json_decision`),
    or an unavailable outcome saying why not. For native formats with their own JSON verdicts."""
    text = text or ""
    problem = text_problem(text)
    if problem is not None:
        return problem
    try:
        return _decode_single_object(_extract_payload(text))
    except _Unavailable as exc:
        return ReviewOutcome.unavailable(exc.reason, exc.detail)


def parse_bare_json(text: str | None) -> Any:
    """The one JSON value that is the whole ``text`` (surrounding JSON whitespace aside), read
    with the strict decoder, or an unavailable outcome saying why not.

    No code fence, no prose: for machine replies such as an HTTP guardrail's. Oversized text,
    duplicate keys, NaN/Infinity, nesting deeper than :data:`MAX_DEPTH`, oversized numbers and
    lone surrogates are unavailable as in :func:`parse_json_decision`.
    """
    text = text or ""
    problem = text_problem(text)
    if problem is not None:
        return problem
    payload = text.strip(" \t\n\r")
    if not payload:
        return ReviewOutcome.unavailable(ReasonCode.EMPTY, "empty reply")
    try:
        value, after = _decode_value(payload)
        if after:
            raise _Unavailable(ReasonCode.EXTRA_PROSE, "text after the JSON value")
        if not _strings_valid(value):
            raise _Unavailable(ReasonCode.INVALID_TEXT, "a string holds lone surrogates")
    except _Unavailable as exc:
        return ReviewOutcome.unavailable(exc.reason, exc.detail)
    return value

