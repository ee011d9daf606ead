"""Differential tests: Qwen3Guard, Granite Guardian and PolicyGuard against their vendors' parsers.

None of the three vendor parsers is a package, so each oracle below is written from the published
description named in the interface's format card:

* Qwen3Guard-Gen: the README's label extraction -- the first match anywhere in the answer of the
  case-sensitive pattern ``Safety: (Safe|Unsafe|Controversial)`` (one literal space). Safe is
  ALLOW; Unsafe and Controversial are BLOCK (the paper's mapping of the three severities).
* Granite Guardian 3.3: the cookbook's ``parse_response`` -- the *last* non-greedy, DOTALL match
  of ``<score>(.*?)</score>`` (tag names case-sensitive) in the stripped answer; the model card's
  score words ``yes`` (criterion met: BLOCK) and ``no`` (ALLOW), surrounding whitespace aside.
  The repository's evaluation harness reads differently (the *first* tag, lower-cased, ``yes``
  or ``no`` anywhere in it); authpairs must agree with both.
* PolicyGuard-4B: the model card's output labels -- the whole answer is ``violation`` or
  ``no violation`` (``no-violation`` in the training objective); the paper's rule, the default,
  spells the second ``no_violation``.

For every generated answer: whenever authpairs records a decision, the oracle gives the same one;
where the oracle decides and authpairs does not, the reason code is one the card lists.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.cases.dataset import Dataset
from authpairs.errors import ReviewerError
from authpairs.review.interfaces import ReviewInterface, get_interface
from authpairs.review.outcome import Decision, OutcomeStatus, ReasonCode
from authpairs.runs.api import run_async
from authpairs.runs.config import RunConfig
from authpairs.runs.store import RecordStore

A, B = Decision.ALLOW, Decision.BLOCK
Oracle = Callable[[str], Decision | None]


# --- the vendors' parsers, as published -----------------------------------------------------

_QWEN = re.compile(r"Safety: (Safe|Unsafe|Controversial)")


def qwen_vendor(text: str) -> Decision | None:
    """Qwen3Guard README: first ``Safety: <label>`` match anywhere; Safe -> ALLOW, else BLOCK."""
    match = _QWEN.search(text)
    if match is None:
        return None
    return A if match.group(1) == "Safe" else B


_GRANITE = re.compile(r"<score>(.*?)</score>", re.DOTALL)


def granite_vendor(text: str) -> Decision | None:
    """Granite cookbook: the last ``<score>...</score>`` content; yes -> BLOCK, no -> ALLOW."""
    scores = _GRANITE.findall(text.strip())
    if not scores:
        return None
    return {"yes": B, "no": A}.get(scores[-1].strip())


_GRANITE_EVAL = re.compile(r"<score>\s*(.*?)\s*</score>", re.DOTALL)


def granite_eval_vendor(text: str) -> Decision | None:
    """Granite's evaluation harness: the first score tag, lower-cased, ``yes`` or ``no`` in it."""
    scores = _GRANITE_EVAL.findall(text.strip())
    if not scores:
        return None
    word = scores[0].strip().lower()
    return B if "yes" in word else A if "no" in word else None


def policyguard_card(text: str) -> Decision | None:
    """PolicyGuard model card: the answer is one of its labels."""
    return {"violation": B, "no violation": A, "no-violation": A}.get(text.strip())


def policyguard_paper(text: str) -> Decision | None:
    """The paper's rule: only the whole labels ``violation`` and ``no_violation``."""
    return {"violation": B, "no_violation": A}.get(text.strip())


# --- generated answers: the real format, its near misses and other guards' formats ----------

LOOKALIKES = ["unsafe\nS1", "safe", '{"User Safety": "unsafe"}', "User Safety: safe",
              "<|channel|>final<|message|>1<|return|>", "<score> yes </score>", "violation",
              "no_violation", "Safety: Safe", "ALLOW", '{"decision": "BLOCK"}']


def mostly(clean: str, *noisy: str) -> st.SearchStrategy[str]:
    """``clean`` about two times in three, otherwise one of the near misses."""
    return st.one_of(st.just(clean), st.just(clean), st.sampled_from(noisy))


JOINERS = mostly("\n", "\r\n", "\n\n", " ", "", "\u2028", "\x85", "\t")
THINK = mostly("", "<think>\n\n</think>\n\n", "<think>The grant is active.</think>",
               "<think>unfinished", "</think>", "<THINK>x</THINK>")
PROSE = mostly("", "Answer: ", "The request is ", "**", "```\n", "Sure.\n")
TAIL = mostly("", "Safety: Unsafe", "<score> no </score>", "because", "```", *LOOKALIKES)
CUT = st.one_of(st.none(), st.integers(1, 120))  # None: the whole answer; else a truncation
FINISH = st.sampled_from([None, "stop", "eos", "length", "content_filter"])


def _compose(parts: list[str], joiner: str, cut: int | None) -> str:
    return joiner.join(p for p in parts if p)[:cut]


QWEN_PREFIX = mostly("Safety: ", "safety: ", "SAFETY: ", "Safety:  ", "Safety:", "Safety:\t",
                     "Safety:\u00a0", "\u017fafety: ", "Saf\u0435ty: ", "Safety\uff1a ",
                     "**Safety:** ", "Safety: **")
QWEN_LABEL = st.one_of(st.sampled_from(["Safe", "Unsafe", "Controversial"]),
                       st.sampled_from(["safe", "SAFE", "unsafe", "Safer", "Unsafe.",
                                        "\u0405afe", "Sa\ufb00e", "Controversial**", "Safe ",
                                        "Fine"]))
QWEN_CATEGORIES = st.one_of(
    st.sampled_from(["", "Categories: None", "Categories: Violent", "Categories: PII, Jailbreak"]),
    st.sampled_from(["categories: None", "Categories: Weather", "Categories:  None",
                     "Category: PII", "Categories: Unethical Acts\nRefusal: No",
                     "Categories: \u0412iolent"]))
QWEN_ANSWERS = st.builds(
    lambda think, prose, prefix, label, joiner, cats, tail, cut: _compose(
        [think, prose + prefix + label, cats, tail], joiner, cut),
    THINK, PROSE, QWEN_PREFIX, QWEN_LABEL, JOINERS, QWEN_CATEGORIES, TAIL, CUT)

GRANITE_ANSWERS = st.builds(
    lambda think, prose, opened, word, closed, joiner, tail, cut: _compose(
        [think, prose + opened + word + closed, tail], joiner, cut),
    st.one_of(THINK, st.sampled_from(["<think>x <score> no</think>",
                                      "<think>I would say <score> no </score>.</think>"])),
    PROSE, mostly("<score>", "<SCORE>", "<Score>", "< score>", "\u2039score>", "<score >",
                  "score>"),
    st.one_of(st.sampled_from([" yes ", " no ", "yes", "no", "\nyes\n"]),
              st.sampled_from(["YES", " No ", " y\u0435s ", " maybe ", " yes.", " no no ",
                               ""])),
    mostly("</score>", "</SCORE>", "</ score>", "", "<score>"), JOINERS, TAIL, CUT)

POLICYGUARD_ANSWERS = st.builds(
    lambda think, lead, label, trail, cut: (think + lead + label + trail)[:cut],
    THINK, mostly("", " ", "\n", "Label: ", "```\n"),
    st.one_of(st.sampled_from(["violation", "no_violation", "no violation", "no-violation"]),
              st.sampled_from(["Violation", "NO_VIOLATION", "no_viol", "no", "violation.",
                               "vi\u043elation", "no\u2010violation",
                               "no_violation\n\nviolation", *LOOKALIKES])),
    mostly("", " ", "\n", ".", " detected", "\n```"), CUT)

# Reason codes a card lists for answers the vendor's parser reads but authpairs does not.
STRICTER: dict[str, set[ReasonCode]] = {
    "qwen3guard": {ReasonCode.NO_LABEL, ReasonCode.MALFORMED, ReasonCode.EXTRA_PROSE,
                   ReasonCode.INVALID_VALUE, ReasonCode.LENGTH, ReasonCode.FILTERED},
    "granite-guardian": {ReasonCode.NO_LABEL, ReasonCode.MALFORMED, ReasonCode.EXTRA_PROSE,
                         ReasonCode.LENGTH, ReasonCode.FILTERED},
    "policyguard": {ReasonCode.NO_LABEL, ReasonCode.FILTERED},
}


def _differential(interface: ReviewInterface, name: str, oracle: Oracle, text: str,
                  finish: str | None) -> None:
    outcome = interface.parse(ChatResponse(text=text, finish_reason=finish))
    vendor = oracle(text)
    if outcome.status is OutcomeStatus.DECISION:
        assert vendor is outcome.decision, (text, finish, outcome)
        return
    assert outcome.status is OutcomeStatus.UNAVAILABLE and outcome.dispatch.value == "BLOCK"
    if vendor is not None and text.strip():
        assert outcome.reason_code in STRICTER[name], (text, finish, outcome)
        assert outcome.detail, outcome


@settings(max_examples=300, deadline=None)
@given(text=QWEN_ANSWERS, finish=FINISH)
def test_qwen3guard_never_decides_unlike_qwens_regex(text: str, finish: str | None) -> None:
    _differential(get_interface("qwen3guard"), "qwen3guard", qwen_vendor, text, finish)


@settings(max_examples=300, deadline=None)
@given(text=GRANITE_ANSWERS, finish=FINISH)
def test_granite_never_decides_unlike_the_cookbook_parser(text: str, finish: str | None) -> None:
    _differential(get_interface("granite-guardian"), "granite-guardian", granite_vendor, text,
                  finish)
    _differential(get_interface("granite-guardian"), "granite-guardian", granite_eval_vendor,
                  text, finish)


@settings(max_examples=200, deadline=None)
@given(text=POLICYGUARD_ANSWERS, finish=FINISH)
def test_policyguard_card_labels_never_decide_unlike_the_card(text: str,
                                                              finish: str | None) -> None:
    interface = get_interface("policyguard", {"labels": "card"})
    _differential(interface, "policyguard", policyguard_card, text, finish)


@settings(max_examples=200, deadline=None)
@given(text=POLICYGUARD_ANSWERS, finish=FINISH)
def test_policyguard_paper_labels_never_decide_unlike_the_paper(text: str,
                                                                finish: str | None) -> None:
    _differential(get_interface("policyguard"), "policyguard", policyguard_paper, text, finish)


@settings(max_examples=100, deadline=None)
@given(label=st.sampled_from(["Safe", "Unsafe", "Controversial"]),
       categories=st.lists(st.sampled_from(["Violent", "PII", "Jailbreak", "None",
                                            "Suicide & Self-Harm"]), max_size=3),
       end=st.sampled_from(["", "\n", " \n"]))
def test_qwen3guard_decides_every_answer_in_the_published_format(label: str,
                                                                 categories: list[str],
                                                                 end: str) -> None:
    text = f"Safety: {label}\n" + (f"Categories: {', '.join(categories)}" if categories else "")
    outcome = get_interface("qwen3guard").parse(ChatResponse(text=text + end,
                                                             finish_reason="stop"))
    assert outcome.status is OutcomeStatus.DECISION and outcome.decision is qwen_vendor(text)


@settings(max_examples=100, deadline=None)
@given(reasoning=st.text(max_size=60).filter(lambda r: "<" not in r),
       word=st.sampled_from(["yes", "no"]), pad=st.sampled_from(["", " ", "\n"]),
       think=st.booleans())
def test_granite_decides_every_answer_in_the_published_format(reasoning: str, word: str,
                                                              pad: str, think: bool) -> None:
    text = (f"<think>{reasoning}</think>\n" if think else "") + f"<score>{pad}{word}{pad}</score>"
    outcome = get_interface("granite-guardian").parse(ChatResponse(text=text,
                                                                   finish_reason="stop"))
    assert outcome.status is OutcomeStatus.DECISION
    assert outcome.decision is granite_vendor(text)


@pytest.mark.parametrize(("labels", "text", "decision"), [
    ("paper", "no_violation", A), ("paper", "violation", B), ("card", "no violation", A),
    ("card", "no-violation", A), ("card", "violation", B), ("card", " no violation\n", A)])
def test_policyguard_label_sets_decide_their_own_spellings(labels: str, text: str,
                                                           decision: Decision) -> None:
    interface = get_interface("policyguard", {"labels": labels})
    for finish in ("stop", "length"):
        outcome = interface.parse(ChatResponse(text=text, finish_reason=finish))
        assert outcome.decision is decision, (labels, text, finish, outcome)


def test_policyguard_names_the_label_set_that_would_have_taken_the_answer() -> None:
    paper = get_interface("policyguard").parse(ChatResponse(text="no violation",
                                                            finish_reason="stop"))
    assert paper.reason_code is ReasonCode.NO_LABEL and "'card' label" in paper.detail
    card = get_interface("policyguard", {"labels": "card"}).parse(
        ChatResponse(text="no_violation", finish_reason="stop"))
    assert card.reason_code is ReasonCode.NO_LABEL and "'paper' label" in card.detail
    with pytest.raises(ReviewerError, match="labels must be one of paper, card"):
        get_interface("policyguard", {"labels": "model-card"})


def test_policyguard_label_sets_share_one_prompt(examples: Dataset) -> None:
    case = examples.cases[0].public
    paper = get_interface("policyguard").render(case)
    card = get_interface("policyguard", {"labels": "card"}).render(case)
    assert paper.sha256() == card.sha256()


def card_spelling(request: ChatRequest) -> str:
    """A scripted PolicyGuard that answers in the model card's spelling."""
    assert "Trajectory:" in request.messages[-1]["content"]
    return "no violation"


@pytest.mark.parametrize(("options", "decided"), [({"labels": "card"}, True), ({}, False)])
async def test_a_run_takes_the_label_set_from_interface_options(
        tmp_path: Path, options: dict[str, str], decided: bool) -> None:
    config = RunConfig.model_validate({
        "dataset": "examples", "split": "all", "limit": 2, "enforce": False,
        "records": str(tmp_path / "runs.sqlite"), "concurrency": 1,
        "reviewer": {"interface": "policyguard", "interface_options": options,
                     "backend": {"kind": "scripted", "script": f"{__name__}:card_spelling"},
                     "sampling": {"max_tokens": 4}}})
    state = await run_async(config, progress=False)
    with RecordStore(tmp_path / "runs.sqlite") as store:
        records = store.case_records(state.run_id)
        info = store.get_run(state.run_id)
    assert len(records) == 2 and info is not None
    assert info.config["resolved"]["reviewer"]["interface_options"] == options
    for record in records:
        if decided:
            assert record.status == "decision" and record.decision == "ALLOW", record
        else:
            assert record.status == "unavailable" and record.reason_code == "no_label", record
