"""Inputs and outputs shared by both evaluators (data only, no evaluation logic)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


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
    ``null`` or ``list`` (of strings or numbers).
    """

    type: str
    value: Any
