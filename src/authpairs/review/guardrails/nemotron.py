"""``nemotron-safety``: NVIDIA's content-safety models, each with its own prompt and answer format.

``interface_options.family`` picks the model family (the format card,
``authpairs guardrails --card nemotron-safety``, lists the sources of each):

* ``content-safety`` (default; Nemotron 3.5 Content Safety, the paper's model): the chat template
  builds the safety prompt itself. The user message is the operation and its evidence; the
  authorization policy goes in ``chat_template_kwargs.custom_policy`` with ``enable_thinking``
  (``thinking``). NeMo's docs describe the custom policy and the built-in taxonomy's category
  list (``request_categories: "/categories"``) as separate modes, so by default the custom
  policy is sent with ``request_categories: "/no_categories"`` (the template's own default);
  ``categories: true`` sends ``/categories`` with it, as the paper's runs did. The answer is lines
  ``User Safety: safe|unsafe`` and, when unsafe, ``Safety Categories: ...``; it mirrors NeMo
  Guardrails' ``nemotron_content_safety_parse_prompt_safety``.
* ``reasoning-4b`` (Nemotron-Content-Safety-Reasoning-4B): one user message in NVIDIA's prompt
  layout with the policy as the taxonomy's only category, ending ``/think`` or ``/no_think``.
  The answer is ``Prompt harm: harmful|unharmful`` (and ``Response harm: None``); it mirrors
  ``nemotron_reasoning_parse_prompt_safety``.
* ``nemoguard-8b`` (Llama-3.1-NemoGuard-8B-ContentSafety): NVIDIA's prompt template with the
  policy as category S1, answered by one bare JSON object ``{"User Safety": ...}``; it mirrors
  ``nemoguard_parse_prompt_safety``.

Every family reads a complete leading ``<think>`` block as reasoning (NeMo's ``llm_call`` strips
one before parsing). The parsers are stricter than NVIDIA's, never more lenient: wherever a
decision is recorded, NeMo's parser returns the same one (tested against NeMo 0.24.1).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from authpairs.backends.base import ChatRequest
from authpairs.cases.models import PublicCase
from authpairs.review.guardrails.native import NativeInterface, split_think
from authpairs.review.interfaces import RENDERING_KEY, ReviewInterface
from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome
from authpairs.review.parsing import ascii_lower, parse_json_object

FAMILIES = ("content-safety", "reasoning-4b", "nemoguard-8b")
"""The NVIDIA model families ``interface_options.family`` may name."""

_TEMPLATES: dict[str, tuple[str, ...]] = {
    "content-safety": ("nemotron_category.j2", "policy.j2", "operation.j2"),
    "reasoning-4b": ("nemotron_reasoning.j2", "nemotron_category.j2", "policy.j2",
                     "operation.j2"),
    "nemoguard-8b": ("nemotron_nemoguard.j2", "nemotron_category.j2", "policy.j2",
                     "operation.j2"),
}

# NeMo's duplicate-field patterns (output_parsers.py, 0.24.1), applied with NeMo's own flags
# (Unicode case folding) so that every answer NeMo refuses as a repeated field is refused here.
_MENTION = {field: re.compile(rf"{re.escape(field)}\s*:\s*(safe|unsafe)\b", re.IGNORECASE)
            for field in ("User Safety", "Response Safety")}
# The fields a decision is read from: case-folded in ASCII only (re.ASCII), so a Unicode
# look-alike letter (LONG S, KELVIN SIGN) never makes a field or a label. NeMo folds Unicode
# case too; matching less than NeMo only ever makes an answer unavailable.
_FOLD = re.IGNORECASE | re.ASCII
_VERDICT_LINE = re.compile(r"User Safety[ \t]*:[ \t]*(?P<value>safe|unsafe)[ \t]*", _FOLD)
_CATEGORIES_LINE = re.compile(r"Safety Categories[ \t]*:[ \t]*(?P<names>.*)", _FOLD)
_PROMPT_HARM = re.compile(r"Prompt harm[ \t]*:[ \t]*(?P<value>\w+)[ \t]*", _FOLD)
_RESPONSE_HARM = re.compile(r"Response harm[ \t]*:[ \t]*(?P<value>\w+)[ \t]*", _FOLD)
_HARM = {"unharmful": Decision.ALLOW, "harmful": Decision.BLOCK}
_SAFETY = {"safe": Decision.ALLOW, "unsafe": Decision.BLOCK}
_JSON_WHITESPACE = " \t\n\r"
_JSON_KEYS = {"User Safety", "Response Safety", "Safety Categories"}


class NemotronSafetyInterface(NativeInterface):
    """NVIDIA content safety: a family's own prompt, answer grammar and NeMo parser."""

    name = "nemotron-safety"
    think_first = True
    output_contract: ClassVar[str] = (
        "family content-safety (default): optional <think>, then 'User Safety: safe|unsafe' "
        "and, if unsafe, 'Safety Categories: ...'; reasoning-4b: 'Prompt harm: "
        "harmful|unharmful'; nemoguard-8b: one bare JSON object {\"User Safety\": ...}; "
        "safe/unharmful -> ALLOW, unsafe/harmful -> BLOCK")

    def __init__(self, family: str = "content-safety", thinking: bool = True,
                 categories: bool | None = None) -> None:
        self.check_choice("family", family, FAMILIES)
        self.family = family
        self.template_files = _TEMPLATES[family]
        self.thinking = bool(thinking) and family != "nemoguard-8b"
        self.categories = bool(categories)
        self.categories_given = categories is not None

    def rendering(self) -> str | None:
        """content-safety without ``categories`` written: NeMo's custom-policy mode
        (``/no_categories``; versions before sent ``/categories`` by default)."""
        if self.family == "content-safety" and not self.categories_given:
            return "nemotron-safety 2: custom policy without /categories by default"
        return None

    def as_recorded(self, template_hashes: dict[str, str]) -> ReviewInterface:
        """A header without :meth:`rendering`'s name, where this interface declares one, was
        written when ``categories`` defaulted to true: its requests sent ``/categories``."""
        if self.rendering() is None or RENDERING_KEY in template_hashes:
            return self
        return NemotronSafetyInterface(self.family, self.thinking, categories=True)

    def settings_key(self) -> str:
        """Vendor settings differ by family, and for content-safety with thinking."""
        think = ":think" if self.family == "content-safety" and self.thinking else ""
        return f"{self.name}:{self.family}{think}"

    def render(self, case: PublicCase) -> ChatRequest:
        """The family's request: chat-template arguments (content-safety) or one user prompt."""
        if self.family == "content-safety":
            policy = self.text("nemotron_category.j2", case).rstrip("\n")
            kwargs: dict[str, Any] = {
                "custom_policy": policy, "enable_thinking": self.thinking,
                "request_categories": "/categories" if self.categories else "/no_categories"}
            return ChatRequest(
                messages=[{"role": "user", "content": self.text("operation.j2", case)}],
                options={"chat_template_kwargs": kwargs})
        template = ("nemotron_reasoning.j2" if self.family == "reasoning-4b"
                    else "nemotron_nemoguard.j2")
        content = self.text(template, case, thinking=self.thinking).rstrip("\n")
        return ChatRequest(messages=[{"role": "user", "content": content}])

    def parse_text(self, text: str, finish_reason: str | None) -> ReviewOutcome:
        """The family's verdict after an optional leading think block."""
        split = split_think(text)
        if split is None:
            return ReviewOutcome.unavailable(
                ReasonCode.MALFORMED, "unbalanced <think> block or text after a second one")
        answer, reasoning = split
        if self.family == "content-safety":
            return parse_content_safety(answer)
        if self.family == "reasoning-4b":
            return parse_prompt_harm(answer)
        return parse_nemoguard_json(answer, stripped=reasoning is not None)


def parse_content_safety(answer: str) -> ReviewOutcome:
    """``User Safety: safe|unsafe`` and, only when unsafe, one ``Safety Categories:`` line.

    Stricter than NeMo's line parser: the verdict must be the first line with nothing after the
    word, no other line is accepted, and a categories line with a ``safe`` verdict is refused.
    NeMo's own rejections (a verdict field stated twice anywhere) apply too.
    """
    for field, pattern in _MENTION.items():
        if len(pattern.findall(answer)) > 1:
            return ReviewOutcome.unavailable(ReasonCode.DUPLICATE_KEY,
                                             f"{field!r} stated more than once")
    lines = answer.strip().splitlines()
    if not lines:
        return ReviewOutcome.unavailable(ReasonCode.EMPTY, "no verdict after the think block")
    verdict = _VERDICT_LINE.fullmatch(lines[0])
    if verdict is None:
        return ReviewOutcome.unavailable(
            ReasonCode.NO_LABEL, f"first line {lines[0][:60]!r} is not 'User Safety: safe|unsafe'")
    label = ascii_lower(verdict.group("value"))
    if label not in _SAFETY:  # defensive: the ASCII-only pattern admits only safe/unsafe
        return ReviewOutcome.unavailable(ReasonCode.NO_LABEL,
                                         f"verdict {verdict.group('value')!r} is not ASCII")
    rest = [line for line in lines[1:] if line.strip()]
    if not rest:
        return ReviewOutcome.decided(_SAFETY[label])
    categories = _CATEGORIES_LINE.fullmatch(rest[0].strip())
    if categories is None or len(rest) > 1:
        reason = (ReasonCode.EXTRA_FIELD if "response safety" in ascii_lower(rest[0])
                  else ReasonCode.EXTRA_PROSE)
        return ReviewOutcome.unavailable(reason, f"unexpected line {rest[0][:60]!r}")
    if label == "safe":
        return ReviewOutcome.unavailable(ReasonCode.INVALID_VALUE,
                                         "categories named with a safe verdict")
    names = [name.strip() for name in categories.group("names").split(",") if name.strip()]
    return ReviewOutcome.decided(Decision.BLOCK,
                                 checks=[{"categories": names}] if names else None)


def parse_prompt_harm(answer: str) -> ReviewOutcome:
    """``Prompt harm: harmful|unharmful`` first, then at most ``Response harm: <word>``.

    NeMo's reasoning parser searches the whole text for the first ``Prompt harm:`` and treats
    anything but ``unharmful`` (a missing field included) as harmful; authpairs accepts only the
    two words at the start of the answer and refuses every other shape.
    """
    lines = [line for line in answer.strip().splitlines() if line.strip()]
    if not lines:
        return ReviewOutcome.unavailable(ReasonCode.EMPTY, "no verdict after the think block")
    harm = _PROMPT_HARM.fullmatch(lines[0].strip())
    if harm is None:
        return ReviewOutcome.unavailable(
            ReasonCode.NO_LABEL, f"first line {lines[0][:60]!r} is not 'Prompt harm: ...'")
    label = ascii_lower(harm.group("value"))
    if label not in _HARM:
        return ReviewOutcome.unavailable(ReasonCode.NO_LABEL,
                                         f"prompt harm {harm.group('value')[:40]!r} is not "
                                         "harmful or unharmful")
    rest = lines[1:]
    if len(rest) > 1 or (rest and _RESPONSE_HARM.fullmatch(rest[0].strip()) is None):
        return ReviewOutcome.unavailable(ReasonCode.EXTRA_PROSE,
                                         f"unexpected line {rest[0][:60]!r}")
    return ReviewOutcome.decided(_HARM[label])


def parse_nemoguard_json(answer: str, *, stripped: bool) -> ReviewOutcome:
    """One bare JSON object with a string ``User Safety`` of ``safe`` or ``unsafe`` (any case).

    NeMo hands the text to ``json.loads`` as it is (after ``llm_call`` removed a think block and
    trimmed the rest, ``stripped``): a markdown fence or non-JSON whitespace around the object
    is refused as NeMo refuses it. Stricter than NeMo: duplicate keys, NaN, unknown keys and any
    ``User Safety`` other than safe/unsafe (NeMo reads it as unsafe) are unavailable.
    """
    if "```" in answer:
        return ReviewOutcome.unavailable(ReasonCode.EXTRA_PROSE,
                                         "markdown fence (NeMo's parser reads bare JSON only)")
    if not stripped and answer.strip(_JSON_WHITESPACE) != answer.strip():
        return ReviewOutcome.unavailable(ReasonCode.EXTRA_PROSE,
                                         "non-JSON whitespace around the object")
    value = parse_json_object(answer)
    if isinstance(value, ReviewOutcome):
        return value
    extra = sorted(set(value) - _JSON_KEYS)
    if extra:
        return ReviewOutcome.unavailable(ReasonCode.EXTRA_FIELD, f"unexpected key {extra[0]!r}")
    verdict = value.get("User Safety")
    if verdict is None:
        return ReviewOutcome.unavailable(ReasonCode.MISSING_FIELD, "no 'User Safety'")
    for key in _JSON_KEYS:
        if key in value and not isinstance(value[key], str):
            return ReviewOutcome.unavailable(ReasonCode.WRONG_TYPE, f"{key!r} not a string")
    label = ascii_lower(verdict)
    if label not in _SAFETY:
        return ReviewOutcome.unavailable(ReasonCode.INVALID_VALUE,
                                         f"'User Safety' is {verdict[:40]!r}")
    names = [name.strip() for name in value.get("Safety Categories", "").split(",")
             if name.strip()]
    if names and label == "safe":
        return ReviewOutcome.unavailable(ReasonCode.INVALID_VALUE,
                                         "categories named with a safe verdict")
    return ReviewOutcome.decided(_SAFETY[label],
                                 checks=[{"categories": names}] if names else None)
