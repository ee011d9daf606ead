"""Inputs and outputs shared by both evaluators (data only, no evaluation logic)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

#: Types a record field may declare (a field may also hold an explicit null, or be absent).
RECORD_FIELD_TYPES: tuple[str, ...] = ("string", "number", "boolean", "timestamp")


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
