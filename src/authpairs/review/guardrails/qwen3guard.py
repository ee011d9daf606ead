"""``qwen3guard``: Qwen3Guard-Gen with its fixed content-safety taxonomy (a control).

Qwen3Guard takes no custom policy: the case (policy, operation, evidence) is moderated as a user
prompt and the model applies its own taxonomy. ``Safety: Safe`` -> ALLOW; ``Safety: Unsafe`` or
``Safety: Controversial`` -> BLOCK. This measures *authorization transfer* -- whether a content
classifier happens to track authorization -- not a supported custom-policy interface.
"""

from __future__ import annotations

import re
from typing import ClassVar

from authpairs.backends.base import ChatRequest
from authpairs.cases.models import PublicCase
from authpairs.review.guardrails.native import NativeInterface
from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome

CATEGORIES = ("Violent", "Non-violent Illegal Acts", "Sexual Content or Sexual Acts", "PII",
              "Suicide & Self-Harm", "Unethical Acts", "Politically Sensitive Topics",
              "Copyright Violation", "Jailbreak", "None")
_LABELS = {"safe": Decision.ALLOW, "unsafe": Decision.BLOCK, "controversial": Decision.BLOCK}
_SAFETY = re.compile(r"\Asafety:[ \t]*(?P<label>[A-Za-z]+)[ \t]*\Z", re.IGNORECASE)
_CATEGORIES = re.compile(r"\Acategories:[ \t]*(?P<names>.*)\Z", re.IGNORECASE)
_KNOWN = {c.lower() for c in CATEGORIES}


class Qwen3GuardInterface(NativeInterface):
    """Qwen3Guard-Gen prompt moderation: ``Safety: ...`` then ``Categories: ...``."""

    name = "qwen3guard"
    template_files = ("qwen3guard.j2", "policy.j2", "operation.j2")
    output_contract: ClassVar[str] = (
        "'Safety: Safe|Unsafe|Controversial' then optional 'Categories: <taxonomy names>'; "
        "Safe -> ALLOW, Unsafe/Controversial -> BLOCK (fixed taxonomy: a transfer control)")

    def render(self, case: PublicCase) -> ChatRequest:
        """The whole public case as the user prompt to moderate."""
        return ChatRequest(messages=[{"role": "user",
                                      "content": self.text("qwen3guard.j2", case)}])

    def parse_text(self, text: str, finish_reason: str | None) -> ReviewOutcome:
        """First line the safety label, an optional categories line, nothing else."""
        lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
        safety = _SAFETY.match(lines[0])
        if safety is None or safety.group("label").lower() not in _LABELS:
            return ReviewOutcome.unavailable(ReasonCode.NO_LABEL,
                                             f"first line {lines[0][:60]!r} is not a safety label")
        rest = lines[1:]
        if len(rest) > 1:
            return ReviewOutcome.unavailable(ReasonCode.EXTRA_PROSE, "text after the categories")
        if rest:
            categories = _CATEGORIES.match(rest[0])
            if categories is None:
                return ReviewOutcome.unavailable(ReasonCode.EXTRA_PROSE,
                                                 f"unexpected line {rest[0][:60]!r}")
            names = [n.strip().lower() for n in categories.group("names").split(",")]
            unknown = [n for n in names if n not in _KNOWN]
            if unknown:
                return ReviewOutcome.unavailable(ReasonCode.INVALID_VALUE,
                                                 f"unknown category {unknown[0][:40]!r}")
        return ReviewOutcome.decided(_LABELS[safety.group("label").lower()])
