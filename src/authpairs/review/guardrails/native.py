"""Base class of the native guardrail interfaces: a template set, a contract, a label parser;
and the ``<think>`` block handling the formats that may open with one share (never a guess:
an unclosed or second think block is not clean)."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any, ClassVar

from authpairs.backends.base import ChatResponse
from authpairs.backends.config import SamplingConfig
from authpairs.cases.models import PublicCase
from authpairs.errors import ReviewerError
from authpairs.review.guardrails.settings import settings_record
from authpairs.review.interfaces import ReviewInterface
from authpairs.review.outcome import ReasonCode, ReviewOutcome
from authpairs.review.parsing import MAX_RESPONSE_CHARS, finish_outcome, guarded, text_problem
from authpairs.review.templates import render

PROMPT_FORMS = ("tokens", "text")
"""How a prompt rendered to token ids is sent: the ids (default) or their text (for servers that
take text only)."""
_THINK = re.compile(r"\A\s*<think>(?P<reasoning>.*?)</think>(?P<answer>.*)\Z", re.DOTALL)


def split_think(text: str) -> tuple[str, str | None] | None:
    """``(answer, reasoning)`` with a leading ``<think>...</think>`` removed.

    Text without a think block is returned whole with reasoning None. An unclosed ``<think>`` or
    a second think block returns None (the output is not clean).
    """
    if "<think>" not in text and "</think>" not in text:
        return text, None
    match = _THINK.match(text)
    if match is None:
        return None
    answer = match.group("answer")
    if "<think>" in answer or "</think>" in answer:
        return None
    return answer, match.group("reasoning")


class NativeInterface(ReviewInterface):
    """A guardrail's own input format and output contract.

    Subclasses list their ``template_files`` (hashed into the run; an option that changes the
    prompt layout sets them per instance), render the public case with
    them, and implement :meth:`parse_text`. ``length_ok`` lets a parser accept a whole label that
    ends exactly at the output limit (PolicyGuard). ``max_chars`` caps the text: a longer answer
    is ``too_large`` before :meth:`parse_text` (or any library) sees it. Anything
    :meth:`parse_text` raises, a library's ``BaseException`` included, is ``parser_error``.

    An interface that sends token ids sets ``sends_text`` False (:meth:`send_prompt_as`), so
    :meth:`~authpairs.review.interfaces.ReviewInterface.request` sends its cases unrefused. An
    interface whose answer structure must be read from token ids overrides
    :meth:`parse_response`.
    """

    template_files: tuple[str, ...]
    answer_schema: ClassVar[dict[str, Any]] = {}
    length_ok: ClassVar[bool] = False
    max_chars: ClassVar[int] = MAX_RESPONSE_CHARS
    think_first: ClassVar[bool] = False
    """Whether an answer may open with a ``<think>`` block (:meth:`finish` keeps it as the
    reasoning)."""

    def check_choice(self, option: str, value: object, choices: Collection[str]) -> None:
        """Refuse an ``interface_options`` value that is not one of ``choices``."""
        if value not in choices:
            raise ReviewerError(f"{self.name}: {option} must be one of {', '.join(choices)}, "
                                f"not {value!r}")

    def send_prompt_as(self, prompt: str) -> None:
        """``prompt: tokens`` or ``text`` (:data:`PROMPT_FORMS`) of an interface that renders
        token ids; as text, the prompt is refused for a case that spells a control token."""
        self.check_choice("prompt", prompt, PROMPT_FORMS)
        self.prompt = prompt
        self.sends_text = prompt == "text"

    def finish(self, response: ChatResponse) -> ChatResponse:
        """With :attr:`think_first`, a leading think block kept as the reasoning when the
        server left the block in the content and reported no reasoning of its own."""
        split = split_think(response.text or "") if self.think_first else None
        if split is None or split[1] is None or response.reasoning:
            return response
        return response.model_copy(update={"reasoning": split[1]})

    def templates(self) -> list[str]:
        """The template files this interface renders."""
        return list(self.template_files)

    def settings_key(self) -> str:
        """The key of this interface's recommended settings
        (:mod:`~authpairs.review.guardrails.settings`): its name, unless an option changes the
        vendor's advice."""
        return self.name

    def settings_record(self, sampling: SamplingConfig) -> dict[str, Any] | None:
        """The run's sampling against the vendor's and the paper's recommendation."""
        return settings_record(self.settings_key(), sampling.model_dump())

    def text(self, template: str, case: PublicCase, **extra: Any) -> str:
        """Render one of this interface's templates for ``case``."""
        return render(template, **case.model_dump(mode="json"), **extra)

    def parse(self, response: ChatResponse) -> ReviewOutcome:
        """Check the finish reason, the text cap and emptiness, then parse the label strictly."""
        problem = finish_outcome(response.finish_reason, length_ok=self.length_ok)
        if problem is not None:
            return problem
        text = response.text or ""
        problem = text_problem(text, self.max_chars)
        if problem is not None:
            return problem
        if not text.strip():
            return ReviewOutcome.unavailable(ReasonCode.EMPTY, "empty response")
        return guarded(lambda: self.parse_response(response), f"{self.name} parser")

    def parse_response(self, response: ChatResponse) -> ReviewOutcome:
        """Map a checked response (usable finish reason, non-empty text within the cap) to an
        outcome: :meth:`parse_text` of its text, unless the interface reads token ids."""
        return self.parse_text(response.text or "", response.finish_reason)

    def parse_text(self, text: str, finish_reason: str | None) -> ReviewOutcome:
        """Map a non-empty answer to a decision, or to unavailable with a reason code."""
        raise NotImplementedError
