"""``granite-guardian``: IBM Granite Guardian with custom criteria and thinking, 3.x or 4.x.

``interface_options.family`` names the model family, whose prompt layouts differ:

* ``3.x`` (default; Granite Guardian 3.3, the paper's): the operation and evidence are the user
  message; the authorization policy is the custom criterion, passed the model card's way, through
  the chat template (``guardian_config.custom_criteria``, with ``think``).
* ``4.x`` (Granite Guardian 4.1): the operation and evidence are a user message, and the
  criterion goes in a ``<guardian>`` block, a second and last user message written as IBM's 4.1
  cookbook writes it (mode selector ``<think>`` or ``<no-think>``, the judge instruction,
  ``### Criteria:``, ``### Scoring Schema:`` for the last user's text). No chat-template
  arguments are sent.

A family that the served model contradicts is refused before any case
(:meth:`GraniteGuardianInterface.check_backend`): each family's prompt means nothing to the other.

Both answer ``<think>...</think>`` (empty in 4.x no-think mode) then ``<score> yes </score>``
(the text meets the criterion: a violation -> BLOCK) or ``<score> no </score>`` (-> ALLOW).
Exactly one score tag, last, with nothing but the think block before it. IBM's cookbook parsers
read the last ``<score>(.*?)</score>`` match (4.1: lower-cased); authpairs reads the same tag the
same way and accepts only the words ``yes`` and ``no`` (exact case, surrounding whitespace
allowed) inside it. It is stricter in what may surround the tag (format card
``granite-guardian``).
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import ClassVar

from authpairs.backends.base import ChatRequest
from authpairs.backends.config import BackendConfigBase
from authpairs.cases.models import PublicCase
from authpairs.errors import ConfigError
from authpairs.review.guardrails.native import NativeInterface, split_think
from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome

SCORE_OPEN, SCORE_CLOSE = "<score>", "</score>"
_SCORE = re.compile(r"\A<score>(?P<label>[^<>]*)</score>\Z")  # tag names case-sensitive
SCORE_LABELS = {"yes": Decision.BLOCK, "no": Decision.ALLOW}
"""The words inside the score tag (exact case) and what each means for the operation."""

FAMILIES = ("3.x", "4.x")
"""The Granite Guardian families ``interface_options.family`` may name."""

_TEMPLATES: dict[str, tuple[str, ...]] = {
    "3.x": ("granite_criteria.j2", "granite_user.j2", "policy.j2", "operation.j2"),
    "4.x": ("granite_guardian_block.j2", "granite_criteria.j2", "granite_user.j2", "policy.j2",
            "operation.j2"),
}

# A Granite Guardian version in a model id or file name: granite-guardian-3.3-8b,
# ibm-granite/granite-guardian-4.1-8b, granite4.1-guardian:8b (Ollama), *.gguf files.
_VERSION = re.compile(r"granite[-_ .]?guardian[-_ .]?v?(?P<a>\d+)(?:\.\d+)?"
                      r"|granite[-_ .]?(?P<b>\d+)(?:\.\d+)?[-_ .]?guardian", re.IGNORECASE)


def model_family(name: str) -> str | None:
    """The Granite Guardian family (``3.x``, ``4.x``, ...) a model id or file name names, or
    None when it names no version of Granite Guardian."""
    match = _VERSION.search(name)
    if match is None:
        return None
    return f"{match.group('a') or match.group('b')}.x"


class GraniteGuardianInterface(NativeInterface):
    """Granite Guardian: custom criteria (3.x chat-template argument, 4.x ``<guardian>``
    block), ``<score>`` yes/no."""

    name = "granite-guardian"
    think_first = True
    output_contract: ClassVar[str] = (
        "optional <think>...</think>, then exactly <score> yes </score> (violation -> BLOCK) "
        "or <score> no </score> (-> ALLOW)")

    def __init__(self, think: bool = True, family: str = "3.x") -> None:
        self.check_choice("family", family, FAMILIES)
        self.think = think
        self.family = family
        self.template_files = _TEMPLATES[family]

    def settings_key(self) -> str:
        """Vendor settings differ by family (IBM's 3.3 and 4.1 cookbooks)."""
        return f"{self.name}:{self.family}"

    def render(self, case: PublicCase) -> ChatRequest:
        """3.x: the operation as the user message, the policy as the custom criterion of the
        chat template. 4.x: the operation, then the ``<guardian>`` block as the last user
        message."""
        criteria = self.text("granite_criteria.j2", case).rstrip("\n")
        operation = {"role": "user", "content": self.text("granite_user.j2", case)}
        if self.family == "4.x":
            block = self.text("granite_guardian_block.j2", case, criteria=criteria,
                              think=self.think).rstrip("\n")
            return ChatRequest(messages=[operation, {"role": "user", "content": block}])
        kwargs = {"guardian_config": {"custom_criteria": criteria}, "think": self.think}
        return ChatRequest(messages=[operation], options={"chat_template_kwargs": kwargs})

    def check_backend(self, backend: BackendConfigBase) -> None:
        """Refuse a family the served model contradicts: a model id (the id vLLM serves the
        model under) or the embedded server's GGUF file that names Granite Guardian 4.x with
        family 3.x configured, or the reverse. A name that says no version (an alias) is not
        refused here; the preflight asks the server (:meth:`check_served`)."""
        gguf = getattr(backend, "gguf_path", None)
        names = [backend.model, PurePath(gguf).name if isinstance(gguf, str) and gguf else ""]
        self.check_served([name for name in names if name])

    def check_served(self, names: list[str]) -> None:
        """Refuse a family the model's names contradict: the configured id and GGUF file name
        before the backend starts, and what the server's models endpoint says the model is (vLLM
        names the path it was loaded from as ``root``, which catches a model served under an
        alias) at the preflight."""
        for name in names:
            served = model_family(name)
            if served is not None and served != self.family:
                raise ConfigError(
                    f"reviewer.interface_options.family is '{self.family}' but the backend's "
                    f"model '{name}' is Granite Guardian {served}: a {self.family} prompt "
                    f"({_LAYOUT[self.family]}) is not what a {served} model reads "
                    f"({_LAYOUT.get(served, 'another layout')})",
                    hint=f"set reviewer.interface_options.family: '{served}' in the "
                    "configuration (format card: authpairs guardrails --card granite-guardian)")

    def parse_text(self, text: str, finish_reason: str | None) -> ReviewOutcome:
        """The last thing in the answer must be one whole score tag."""
        split = split_think(text)
        if split is None:
            return ReviewOutcome.unavailable(ReasonCode.MALFORMED, "unbalanced <think> block")
        answer, reasoning = split[0].strip(), split[1] or ""
        if SCORE_OPEN in reasoning or SCORE_CLOSE in reasoning:
            # the cookbook's regex would pair a tag inside the reasoning with the one after it
            return ReviewOutcome.unavailable(ReasonCode.MALFORMED,
                                             "a score tag inside the <think> block")
        match = _SCORE.match(answer)
        if match is None:
            if SCORE_OPEN in answer or SCORE_CLOSE in answer:
                return ReviewOutcome.unavailable(ReasonCode.EXTRA_PROSE,
                                                 f"text around the score tag in {answer[:60]!r}")
            return ReviewOutcome.unavailable(
                ReasonCode.NO_LABEL, f"no <score> tag in {answer[:60]!r} (tag names are "
                "case-sensitive, as in IBM's cookbook parser)")
        label = match.group("label").strip()
        if label not in SCORE_LABELS:
            return ReviewOutcome.unavailable(
                ReasonCode.NO_LABEL, f"score {label[:40]!r} is not exactly yes or no")
        return ReviewOutcome.decided(SCORE_LABELS[label])


_LAYOUT = {"3.x": "the criterion in chat_template_kwargs.guardian_config",
           "4.x": "the criterion in a <guardian> block of the last user message"}
