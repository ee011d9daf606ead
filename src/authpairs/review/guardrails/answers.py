"""Named parsers for guardrails that answer with a string.

A Python callable or an HTTP service may answer with text rather than a :class:`Decision`. The
text goes through a *named parser*: ``label`` (exactly ALLOW, BLOCK or UNKNOWN, ASCII case
ignored), ``json`` (one strict ``{"decision": ...}`` object), or the name of any registered
interface, whose strict parser then applies (e.g. ``policyguard`` or ``qwen3guard``).
"""

from __future__ import annotations

from authpairs.backends.base import ChatResponse
from authpairs.errors import ReviewerError
from authpairs.review.interfaces import INTERFACES, get_interface
from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome
from authpairs.review.parsing import (
    ascii_lower,
    ascii_upper,
    guarded,
    parse_json_decision,
    text_problem,
)
from authpairs.review.schemas import DIRECT_SCHEMA

BASIC_PARSERS = ("label", "json")


def parser_names() -> list[str]:
    """Every parser name a guardrail may use."""
    return [*BASIC_PARSERS, *INTERFACES.names()]


def check_parser(name: str) -> str:
    """``name`` if it is a known parser, else a :class:`ReviewerError` listing the known ones."""
    if name not in parser_names():
        raise ReviewerError(f"unknown parser '{name}' (known: {', '.join(parser_names())})")
    return name


def normalise(text: str) -> str:
    """ASCII letters lower-cased (no other character changes), runs of whitespace collapsed to
    one space and the ends trimmed."""
    return ascii_lower(" ".join(text.split()))


def parse_label(text: str) -> ReviewOutcome:
    """Exactly one of ALLOW, BLOCK, UNKNOWN (surrounding whitespace and ASCII case ignored; no
    Unicode look-alike letter is folded). Text over the cap is ``too_large`` unread."""
    problem = text_problem(text)
    if problem is not None:
        return problem
    label = ascii_upper(normalise(text))
    if label in Decision.__members__:
        return ReviewOutcome.decided(Decision(label))
    if not label:
        return ReviewOutcome.unavailable(ReasonCode.EMPTY, "empty answer")
    return ReviewOutcome.unavailable(ReasonCode.NO_LABEL,
                                     f"{text.strip()[:40]!r} is not ALLOW, BLOCK or UNKNOWN")


def parse_with(parser: str, text: str) -> ReviewOutcome:
    """Parse a guardrail's string answer with the named parser."""
    if parser == "label":
        return parse_label(text)
    if parser == "json":
        return parse_json_decision(text, "stop", DIRECT_SCHEMA)
    interface = get_interface(parser)
    return guarded(lambda: interface.parse(ChatResponse(text=text, finish_reason="stop")),
                   f"parser {parser}")

