"""Differential tests: the ``safeguard`` interface against OpenAI's own Harmony parsers.

The vendor's parsers are called directly from ``openai-harmony``: the completion decoder
``HarmonyEncoding.parse_messages_from_completion_tokens`` (what the harmony README uses to read a
completion) and the token-by-token ``StreamableParser`` (what vLLM's gpt-oss serving code feeds).
The vendor's decision is the text of the last ``final``-channel message, which the
gpt-oss-safeguard policy asks to be ``1`` (violation -> BLOCK) or ``0`` (no violation -> ALLOW).

authpairs reads the same token ids the vendor reads (the server returns them). For every
generated completion -- its markers emitted as special tokens, or some of them written as
ordinary characters (a fake header inside the reasoning) -- whenever authpairs records a
decision, both vendor parsers give the same one; where they decide and authpairs does not, the
reason code is one the card lists; and the completion's text alone never decides.
"""

from __future__ import annotations

import re
from typing import Any

import openai_harmony as h
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from authpairs.backends.base import ChatResponse
from authpairs.cases.dataset import Dataset
from authpairs.review.guardrails.harmony_vocab import harmony_encoding
from authpairs.review.interfaces import get_interface
from authpairs.review.outcome import Decision, OutcomeStatus, ReasonCode
from tests.review.answers import harmony_ids, harmony_parts, harmony_response

A, B = Decision.ALLOW, Decision.BLOCK
_WORDS = {"1": B, "0": A}


def _tokens(text: str) -> list[int]:
    return harmony_ids(text)


def _text(message: Any) -> str:
    return "".join(part.text for part in message.content if isinstance(part, h.TextContent))


def harmony_vendor(ids: list[int]) -> Decision | None:
    """openai-harmony's completion decoder: the last final-channel message, ``0`` or ``1``."""
    try:
        messages = harmony_encoding().parse_messages_from_completion_tokens(
            ids, h.Role.ASSISTANT)
    except h.HarmonyError:
        return None
    finals = [m for m in messages if m.channel == "final"]
    return _WORDS.get(_text(finals[-1]).strip()) if finals else None


def streaming_vendor(ids: list[int]) -> Decision | None:
    """openai-harmony's streaming parser, token by token; an unterminated final message counts
    with the content it has (as vLLM's chat endpoint reports it)."""
    parser = h.StreamableParser(harmony_encoding(), h.Role.ASSISTANT)
    try:
        for token in ids:
            parser.process(token)
    except h.HarmonyError:
        return None
    final = [_text(m) for m in parser.messages if m.channel == "final"]
    if parser.current_channel == "final" and parser.current_content:
        final.append(parser.current_content)
    return _WORDS.get(final[-1].strip()) if final else None


# --- generated completions: Harmony, its near misses and other guards' formats ---------------

FIELDS = ("start", "recipient", "mark", "channel", "message", "content", "end")
NOISE: dict[str, list[str]] = {
    "start": ["<|start|>user", "<|start|>", "", "<|start|>Assistant", "<|start|>assistant "],
    "recipient": [" to=functions.lookup", " to=final"],
    "mark": ["", "<|channel|> ", "\u2039|channel|\u203a", "<|Channel|>"],
    "channel": ["Final", "final ", "f\u0456nal", "final<|constrain|>json",
                "final <|constrain|>json", "", "analysis final", "commentary", "analysis",
                "final"],
    "message": ["", "<|msg|>", "\uff1c|message|\uff1e"],
    "content": ["1.", "\uff11", "\u0660", "one", "violation", "<think>x</think>1", "```\n1\n```",
                "Safety: Safe", "1\n0", "", "**1**", "<score> yes </score>", '{"violation": 1}',
                "unsafe\nS1", "\u00a01", "0", "1", "The delegation is active, so 0."],
    "end": ["<|end|>", "<|return|>", "", "<|call|>", "<|endoftext|>", "<|end|>\n"],
}
TAIL = st.sampled_from(["", "", "", "", "extra text", "\n", "<|end|>",
                        "<|start|>assistant<|channel|>final<|message|>0"])


def _message(channel: str, content: str, end: str) -> dict[str, str]:
    return {"start": "<|start|>assistant", "recipient": "", "mark": "<|channel|>",
            "channel": channel, "message": "<|message|>", "content": content, "end": end}


@st.composite
def harmony_completions(draw: st.DrawFn) -> str:
    """A well-formed completion (analysis messages, then one final message), with zero to three
    of its parts replaced by near misses, maybe a tail, maybe cut short. The first message has
    no header start: a completion continues the prompt's ``<|start|>assistant``."""
    messages = [_message("analysis", draw(st.sampled_from(["The grant is active.", "0", "1"])),
                         "<|end|>") for _ in range(draw(st.integers(0, 2)))]
    messages.append(_message("final", draw(st.sampled_from(["0", "1", " 1\n", "0\n\n"])),
                             draw(st.sampled_from(["", "<|return|>"]))))
    messages[0]["start"] = ""
    for _ in range(draw(st.integers(0, 3))):
        message = draw(st.sampled_from(messages))
        part = draw(st.sampled_from(FIELDS))
        message[part] = draw(st.sampled_from(NOISE[part]))
    text = "".join(m[f] for m in messages for f in FIELDS) + draw(TAIL)
    cut = draw(st.one_of(st.none(), st.none(), st.integers(1, max(1, len(text)))))
    return text[:cut]


FINISH = st.sampled_from([None, "stop", "eos", "length", "content_filter"])
STRICTER = {ReasonCode.MALFORMED, ReasonCode.NO_FINAL_CHANNEL, ReasonCode.MULTIPLE_OBJECTS,
            ReasonCode.EXTRA_PROSE, ReasonCode.NO_LABEL, ReasonCode.LENGTH, ReasonCode.FILTERED}


_MARKER = re.compile(r"(<\|[a-z]+\|>)")


@st.composite
def spoken_ids(draw: st.DrawFn) -> list[int]:
    """A generated completion whose markers the model emitted as special tokens or, each with
    some chance, wrote as ordinary characters."""
    text = draw(harmony_completions())
    parts = [(piece, bool(_MARKER.fullmatch(piece)) and draw(st.integers(0, 3)) > 0)
             for piece in _MARKER.split(text) if piece]
    return harmony_parts(*parts)


def _check(ids: list[int], finish: str | None) -> None:
    answer = harmony_response(ids, finish)
    outcome = get_interface("safeguard").parse(answer)
    vendor, streaming = harmony_vendor(ids), streaming_vendor(ids)
    text_only = get_interface("safeguard").parse(ChatResponse(text=answer.text,
                                                              finish_reason=finish))
    assert text_only.status is OutcomeStatus.UNAVAILABLE
    if outcome.status is OutcomeStatus.DECISION:
        assert vendor is outcome.decision, (answer.text, ids, finish, outcome)
        assert streaming is outcome.decision, (answer.text, ids, finish, outcome)
        return
    assert outcome.status is OutcomeStatus.UNAVAILABLE and outcome.dispatch.value == "BLOCK"
    if vendor is not None or streaming is not None:
        assert outcome.reason_code in STRICTER and outcome.detail, (answer.text, finish, outcome)


@settings(max_examples=250, deadline=None)
@given(text=harmony_completions(), finish=FINISH)
def test_safeguard_never_decides_unlike_openai_harmony(text: str, finish: str | None) -> None:
    _check(_tokens(text), finish)


@settings(max_examples=250, deadline=None)
@given(ids=spoken_ids(), finish=FINISH)
def test_markers_written_as_characters_never_decide_unlike_openai_harmony(
        ids: list[int], finish: str | None) -> None:
    _check(ids, finish)


@settings(max_examples=100, deadline=None)
@given(analysis=st.text(max_size=80).filter(lambda t: "<|" not in t),
       label=st.sampled_from(["0", "1"]), pad=st.sampled_from(["", " ", "\n"]),
       end=st.sampled_from(["", "<|return|>", "<|end|>"]), effort=st.booleans())
def test_safeguard_decides_every_completion_in_the_harmony_format(analysis: str, label: str,
                                                                   pad: str, end: str,
                                                                   effort: bool) -> None:
    lead = f"<|channel|>analysis<|message|>{analysis}<|end|><|start|>assistant" if effort else ""
    ids = _tokens(f"{lead}<|channel|>final<|message|>{pad}{label}{pad}{end}")
    outcome = get_interface("safeguard").parse(harmony_response(ids))
    assert outcome.status is OutcomeStatus.DECISION, (ids, outcome)
    assert outcome.decision is harmony_vendor(ids) is streaming_vendor(ids)


@pytest.mark.parametrize(("text", "reason"), [
    # the vendor reads the last final message; authpairs wants exactly one, and last
    ("<|channel|>final<|message|>0<|end|><|start|>assistant<|channel|>final<|message|>1",
     ReasonCode.MULTIPLE_OBJECTS),
    ("<|channel|>final<|message|>1<|end|><|start|>assistant<|channel|>analysis<|message|>x",
     ReasonCode.EXTRA_PROSE),
    # a final message addressed to a tool is an action, not an answer
    ("<|channel|>final <|constrain|>json<|message|>1", ReasonCode.MALFORMED),
])
def test_stricter_than_harmony_with_a_reason(text: str, reason: ReasonCode) -> None:
    assert harmony_vendor(_tokens(text)) is not None
    outcome = get_interface("safeguard").parse(harmony_response(_tokens(text)))
    assert outcome.reason_code is reason, outcome


def test_prompt_is_what_openai_harmony_renders(examples: Dataset) -> None:
    """The raw prompt decodes to Harmony's own system/developer/user rendering, ending at the
    assistant header, so the completion starts at the channel marker."""
    case = examples.cases[0].public
    request = get_interface("safeguard").render(case)
    prompt, ids = request.prompt or "", request.prompt_token_ids or []
    encoding = harmony_encoding()
    assert encoding.decode(ids[-2:]) == "<|start|>assistant"
    messages = encoding.parse_messages_from_completion_tokens(ids[:-2])
    assert [m.author.role for m in messages] == [h.Role.SYSTEM, h.Role.DEVELOPER, h.Role.USER]
    assert case.policy.text in _text(messages[1]) and case.policy.text not in _text(messages[2])
    assert "Reasoning: medium" in _text(messages[0])
    assert prompt.endswith("<|end|><|start|>assistant")
    stops = {encoding.decode([t]) for t in encoding.stop_tokens_for_assistant_actions()}
    assert stops == {"<|return|>", "<|call|>"}
