"""Inputs and outputs shared by both evaluators (data only, no evaluation logic)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

#: Types a record field may declare (a field may also hold an explicit null, or be absent).
RECORD_FIELD_TYPES: tuple[str, ...] = ("string", "number", "boolean", "timestamp")


#: Largest magnitude of a duration, in seconds (10,000 years of 365.25 days); time arithmetic
#: beyond it is an error, so both evaluators stay within exactly representable numbers.
MAX_DURATION_SECONDS = 315_576_000_000
#: Range of a time, in seconds since 1970-01-01T00:00:00Z: 0001-01-01T00:00:00Z to
#: 9999-12-31T23:59:59Z. A time computed outside it is an error.
MIN_EPOCH = -62_135_596_800
MAX_EPOCH = 253_402_300_799


class Outcome(StrEnum):
    """Result of evaluating a permission expression in one context."""

    TRUE = "true"
    FALSE = "false"
    UNRESOLVED = "unresolved"
    ERROR = "error"


@dataclass(frozen=True)
class EvalResult:
    """An outcome plus a human-readable detail (the error, or why it is unresolved)."""

    outcome: Outcome
    detail: str = ""


@dataclass(frozen=True)
class TypedFact:
    """A fact as given to an evaluator: its declared type and its raw value.

    ``type`` is one of ``string``, ``number``, ``boolean``, ``timestamp`` (canonical UTC text),
    ``null``, ``list`` (of strings or numbers) or ``records`` (a list of mappings; ``fields``
    declares each field's type, one of :data:`RECORD_FIELD_TYPES`).
    """

    type: str
    value: Any
    fields: Mapping[str, str] | None = None
