"""nemotron-safety against NVIDIA's own parsers in NeMo Guardrails 0.24.1 (differential tests).

The vendor side is NeMo as its users run it: ``llm_call`` removes a complete ``<think>`` block
from the content (``_extract_and_remove_think_tags``), then the family's output parser reads the
rest. Whenever authpairs records a decision, that pipeline must give the same decision; where
authpairs refuses an answer NeMo reads, the reason code says why (and the format card lists it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from authpairs.backends.base import ChatResponse
from authpairs.review.guardrails.nemotron import NemotronSafetyInterface
from authpairs.review.outcome import Decision, OutcomeStatus, ReasonCode

output_parsers = pytest.importorskip("nemoguardrails.llm.output_parsers")
call = pytest.importorskip("nemoguardrails.llm.call")
types = pytest.importorskip("nemoguardrails.types")

VendorParser = Callable[[str], Sequence[object]]
PARSERS: dict[str, VendorParser] = {
    "content-safety": output_parsers.nemotron_content_safety_parse_prompt_safety,
    "reasoning-4b": output_parsers.nemotron_reasoning_parse_prompt_safety,
    "nemoguard-8b": output_parsers.nemoguard_parse_prompt_safety,
}
FINISH = st.sampled_from([None, "stop", "length", "content_filter"])


def nemo_decision(family: str, text: str) -> Decision | None:
    """NeMo's decision for ``text`` (None when its parser raises): llm_call, then the parser."""
    response = types.LLMResponse(content=text)
    call._extract_and_remove_think_tags(response)
    try:
        result = PARSERS[family](response.content)
    except ValueError:
        return None
    return Decision.ALLOW if result[0] is True else Decision.BLOCK


def ours(family: str, text: str, finish: str | None = "stop") -> tuple[Decision | None,
                                                                       ReasonCode | None]:
    """authpairs' decision and reason code for ``text``."""
    outcome = NemotronSafetyInterface(family=family).parse(
        ChatResponse(text=text, finish_reason=finish))
    if outcome.status is OutcomeStatus.DECISION:
        return outcome.decision, None
    assert outcome.reason_code is not None and outcome.dispatch.value == "BLOCK"
    return None, outcome.reason_code


def assert_never_more_lenient(family: str, text: str, finish: str | None) -> None:
    """A recorded decision is NeMo's decision; an unavailable one always has a reason."""
    decision, _ = ours(family, text, finish)
    if decision is not None:
        assert finish in (None, "stop"), (family, text, finish)
        assert nemo_decision(family, text) is decision, (family, text, decision)


# Pieces of answers: the families' own words in several spellings, look-alike letters (U+017F
# long s folds to "s" under re.IGNORECASE; Cyrillic a does not), other guards' formats, noise.
THINK = st.sampled_from(["", "<think>The grant covers the ticket.</think>\n",
                         "<think>User Safety: safe\nPrompt harm: unharmful</think>",
                         "  <think>x</think>", "<think>unfinished ", "x</think>\n",
                         "<think>a</think><think>b</think>", "<think></think>"])
WORD = st.sampled_from(["safe", "unsafe", "Safe", "UNSAFE", "ſafe", "unſafe", "sаfe", "safe.",
                        "safety", "harmful", "unharmful", "Unharmful", "HARMFUL", "unhаrmful",
                        "un-harmful", "unharmful_x", "None", "yes", "no", "maybe", ""])
FIELD = st.sampled_from(["User Safety", "user safety", "USER SAFETY", "User  Safety",
                         "User ſafety", "Prompt harm", "prompt HARM", "Prompt Harm",
                         "Response Safety", "Response harm", "Safety", "Safety Categories"])
SEP = st.sampled_from([": ", ":", " : ", ":\n", ":\t", " :  ", "= ", ":\u00a0"])
LINE = st.builds(lambda f, s, w: f + s + w, FIELD, SEP, WORD)
OTHER = st.sampled_from(["Safety Categories: Unauthorized Operation", "Safety Categories: S1, S2",
                         "Safety Categories:", "Response Safety: safe", "Response harm: None",
                         "Response harm: harmful", "User Safety: unsafe", "Prompt harm: harmful",
                         "Safety: Safe", "Categories: None", "<score> yes </score>",
                         "no_violation", "unsafe\nS1", "S1", "The request is fine.", ""])
JOIN = st.sampled_from(["\n", "\n\n", " ", "; ", "\r\n", "\u2028"])
WRAP = st.sampled_from(["{}", " {} ", "\n{}\n", "```\n{}\n```", "```json\n{}\n```",
                        "\u2003{}", "{}\u00a0", "Answer: {}", "{}\nThat is my verdict."])


@st.composite
def line_answers(draw: st.DrawFn) -> str:
    """A generated line-format answer: think block, lines, joins, wrapping."""
    lines = draw(st.lists(st.one_of(LINE, OTHER), min_size=1, max_size=4))
    joins = [draw(JOIN) for _ in lines[1:]]
    body = lines[0] + "".join(j + line for j, line in zip(joins, lines[1:], strict=True))
    return draw(THINK) + draw(WRAP).replace("{}", body)


JSON_VALUE = st.one_of(WORD, st.sampled_from([" safe", "safe ", "SAFE", None, 1, True, ["safe"],
                                              {"a": 1}]))
JSON_KEY = st.sampled_from(["User Safety", "Safety Categories", "Response Safety", "user safety",
                            "Verdict"])


@st.composite
def json_answers(draw: st.DrawFn) -> str:
    """A generated JSON answer: keys, values, duplicates, NaN, fences, think, whitespace."""
    pairs = draw(st.lists(st.tuples(JSON_KEY, JSON_VALUE), min_size=0, max_size=3))
    body = "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in pairs) + "}"
    body = draw(st.sampled_from([body, body.replace("}", ', "n": NaN}'), body + body,
                                 body[:-1], "[" + body + "]", body.replace(": ", ":\n")]))
    return draw(THINK) + draw(WRAP).replace("{}", body)


CLEAN_THINK = st.sampled_from(["", "<think>\nThe grant is active.\n</think>\n\n", "<think></think>",
                               " <think>Prompt harm: harmful User Safety: unsafe</think>\n"])
PAD = st.sampled_from(["", " ", "\n", "\t", "\u2003", "\u00a0", "\n\n"])
NEAR: dict[str, tuple[st.SearchStrategy[str], st.SearchStrategy[str], st.SearchStrategy[str]]] = {
    "content-safety": (st.sampled_from(["User Safety", "user safety", "USER SAFETY", "User ſafety",
                                        "User  Safety"]),
                       st.sampled_from(["safe", "unsafe", "Safe", "UNSAFE", "ſafe", "safe.",
                                        "unsafe,"]),
                       st.sampled_from(["", "\nSafety Categories: Unauthorized Operation",
                                        "\nSafety Categories: S1, S2", "\nsafety categories:",
                                        "\nResponse Safety: safe", "\nUser Safety: unsafe",
                                        "\n\nSafety Categories: x\n"])),
    "reasoning-4b": (st.sampled_from(["Prompt harm", "prompt harm", "PROMPT HARM", "Prompt  harm"]),
                     st.sampled_from(["harmful", "unharmful", "Unharmful", "HARMFUL", "unhаrmful",
                                      "unharmful.", "unharmful_x", "harmless"]),
                     st.sampled_from(["", "\nResponse harm: None", "\nResponse Harm: harmful",
                                      "\nResponse harm: <harmful/unharmful>",
                                      "\nPrompt harm: harmful", "\n\nResponse harm: None\n"])),
}


@st.composite
def near_valid(draw: st.DrawFn, family: str) -> str:
    """An answer close to the family's grammar: a decision is often the right outcome."""
    if family == "nemoguard-8b":
        verdict = draw(st.sampled_from(["safe", "unsafe", "Safe", "UNSAFE", " safe", "ſafe"]))
        value: dict[str, object] = {"User Safety": verdict}
        if draw(st.booleans()):
            value["Safety Categories"] = draw(st.sampled_from(["", "S1", "S1, S2", None]))
        body = json.dumps(value, indent=draw(st.sampled_from([None, 2])))
        return draw(CLEAN_THINK) + draw(PAD) + body + draw(PAD)
    field, word, extra = NEAR[family]
    body = draw(field) + draw(st.sampled_from([": ", ":", " : ", ":\t"])) + draw(word)
    return draw(CLEAN_THINK) + draw(PAD) + body + draw(extra) + draw(PAD)


def truncations(answers: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Answers cut at a random point (as a token limit would cut them)."""
    return st.builds(lambda text, cut: text[:cut], answers, st.integers(0, 80))


@pytest.mark.slow  # several seconds: the slow tier (.ci/run) runs it
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), finish=FINISH, family=st.sampled_from(["content-safety", "reasoning-4b"]))
def test_line_families_never_more_lenient_than_nemo(family: str, data: st.DataObject,
                                                    finish: str | None) -> None:
    text = data.draw(st.one_of(near_valid(family), line_answers(), truncations(line_answers()),
                               truncations(near_valid(family)), st.text(max_size=60)))
    assert_never_more_lenient(family, text, finish)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(near_valid("nemoguard-8b"), json_answers(), truncations(json_answers()),
                      line_answers(), st.text(max_size=60)), finish=FINISH)
def test_nemoguard_json_never_more_lenient_than_nemo(text: str, finish: str | None) -> None:
    assert_never_more_lenient("nemoguard-8b", text, finish)


# Recorded answers: each family's clean forms agree with NeMo; each refusal has its reason.
AGREE: list[tuple[str, str, Decision]] = [
    ("content-safety", "User Safety: safe", Decision.ALLOW),
    ("content-safety", "<think>\nThe delegation was revoked.\n</think>\n\nUser Safety: unsafe\n"
     "Safety Categories: Unauthorized Operation", Decision.BLOCK),
    ("content-safety", "user safety: UNSAFE", Decision.BLOCK),
    ("content-safety", "User Safety: unsafe", Decision.BLOCK),
    ("reasoning-4b", "<think>ok</think>\n\nPrompt harm: unharmful\nResponse harm: None",
     Decision.ALLOW),
    ("reasoning-4b", "Prompt harm: harmful", Decision.BLOCK),
    ("reasoning-4b", "PROMPT HARM: Unharmful", Decision.ALLOW),
    ("nemoguard-8b", '{"User Safety": "safe"}', Decision.ALLOW),
    ("nemoguard-8b", '{"User Safety": "unsafe", "Safety Categories": "S1"}', Decision.BLOCK),
    ("nemoguard-8b", '<think>x</think>\n{"User Safety": "Safe"}', Decision.ALLOW),
]


@pytest.mark.parametrize(("family", "text", "decision"), AGREE)
def test_clean_answers_agree_with_nemo(family: str, text: str, decision: Decision) -> None:
    assert ours(family, text) == (decision, None)
    assert nemo_decision(family, text) is decision


# Stricter than NeMo, each with the reason the card gives. NeMo's own reading is shown beside.
STRICTER: list[tuple[str, str, ReasonCode, Decision | None]] = [
    ("content-safety", "User Safety: safe.", ReasonCode.NO_LABEL, Decision.ALLOW),
    ("content-safety", "User Safety: ſafe", ReasonCode.NO_LABEL, Decision.BLOCK),
    ("content-safety", "Verdict follows.\nUser Safety: safe", ReasonCode.NO_LABEL,
     Decision.ALLOW),
    ("content-safety", "User Safety: safe\nSafety Categories: S1", ReasonCode.INVALID_VALUE,
     Decision.ALLOW),
    ("content-safety", "User Safety: safe\nResponse Safety: safe", ReasonCode.EXTRA_FIELD,
     Decision.ALLOW),
    ("content-safety", "User Safety: unsafe\nSafety Categories: x\nmore", ReasonCode.EXTRA_PROSE,
     Decision.BLOCK),
    ("content-safety", "x</think>\nUser Safety: safe", ReasonCode.MALFORMED, Decision.ALLOW),
    ("content-safety", "User Safety: safe\nUser Safety: unsafe", ReasonCode.DUPLICATE_KEY, None),
    ("content-safety", "<think>unfinished User Safety: safe", ReasonCode.MALFORMED, None),
    ("reasoning-4b", "Prompt harm: unharmful.", ReasonCode.NO_LABEL, Decision.ALLOW),
    ("reasoning-4b", "Prompt harm:\nunharmful", ReasonCode.NO_LABEL, Decision.ALLOW),
    ("reasoning-4b", "The answer. Prompt harm: unharmful", ReasonCode.NO_LABEL, Decision.ALLOW),
    ("reasoning-4b", "Prompt harm: unharmful\nPrompt harm: harmful", ReasonCode.EXTRA_PROSE,
     Decision.ALLOW),
    ("reasoning-4b", "I cannot tell.", ReasonCode.NO_LABEL, Decision.BLOCK),
    ("reasoning-4b", "<think>Prompt harm: unharmful", ReasonCode.MALFORMED, Decision.ALLOW),
    ("nemoguard-8b", '```json\n{"User Safety": "safe"}\n```', ReasonCode.EXTRA_PROSE, None),
    ("nemoguard-8b", '\u2003{"User Safety": "safe"}', ReasonCode.EXTRA_PROSE, None),
    ("nemoguard-8b", '{"User Safety": " safe "}', ReasonCode.INVALID_VALUE, Decision.BLOCK),
    ("nemoguard-8b", '{"User Safety": "maybe"}', ReasonCode.INVALID_VALUE, Decision.BLOCK),
    ("nemoguard-8b", '{"User Safety": "unsafe", "User Safety": "safe"}',
     ReasonCode.DUPLICATE_KEY, Decision.ALLOW),
    ("nemoguard-8b", '{"User Safety": "safe", "Safety Categories": null}', ReasonCode.WRONG_TYPE,
     None),
    ("nemoguard-8b", '{"User Safety": "safe", "Verdict": "x"}', ReasonCode.EXTRA_FIELD,
     Decision.ALLOW),
    ("nemoguard-8b", 'User Safety: safe', ReasonCode.NOT_JSON, None),
]


@pytest.mark.parametrize(("family", "text", "reason", "vendor"), STRICTER)
def test_stricter_than_nemo_with_a_reason(family: str, text: str, reason: ReasonCode,
                                          vendor: Decision | None) -> None:
    assert ours(family, text) == (None, reason)
    assert nemo_decision(family, text) is vendor


def test_a_cut_answer_is_length_although_nemo_would_read_it() -> None:
    text = "<think>The policy grants it.</think>\nUser Safety: safe"
    assert ours("content-safety", text, "length") == (None, ReasonCode.LENGTH)
    assert nemo_decision("content-safety", text) is Decision.ALLOW


def test_every_family_renders_its_own_request() -> None:
    from authpairs.cases.examples import load_examples

    case = load_examples().cases[0].public
    cs = NemotronSafetyInterface().render(case)
    kwargs = (cs.options or {})["chat_template_kwargs"]
    # NeMo's docs: a custom policy and the built-in taxonomy's /categories are separate modes
    assert kwargs["enable_thinking"] is True and kwargs["request_categories"] == "/no_categories"
    assert set(kwargs) == {"custom_policy", "enable_thinking", "request_categories"}
    assert case.policy.text in kwargs["custom_policy"]
    assert [m["role"] for m in cs.messages] == ["user"]
    assert case.policy.text not in cs.messages[0]["content"]  # the template adds the policy
    off = NemotronSafetyInterface(thinking=False).render(case).options or {}
    assert off["chat_template_kwargs"]["enable_thinking"] is False
    assert off["chat_template_kwargs"]["request_categories"] == "/no_categories"
    paper = NemotronSafetyInterface(categories=True).render(case).options or {}
    assert paper["chat_template_kwargs"]["request_categories"] == "/categories"  # the paper's
    think = NemotronSafetyInterface(family="reasoning-4b").render(case).messages[0]["content"]
    assert think.endswith("/think") and "Prompt harm: <harmful/unharmful>" in think
    no_think = NemotronSafetyInterface(family="reasoning-4b", thinking=False).render(case)
    assert no_think.messages[0]["content"].endswith("/no_think")
    guard = NemotronSafetyInterface(family="nemoguard-8b").render(case).messages[0]["content"]
    assert guard.endswith("Output JSON:") and "S1: Unauthorized Operation." in guard
    assert case.policy.text in think and case.policy.text in guard
    assert NemotronSafetyInterface(family="nemoguard-8b").templates()[0] == "nemotron_nemoguard.j2"


def test_unknown_family_is_refused() -> None:
    from authpairs.errors import ReviewerError
    from authpairs.review.interfaces import get_interface

    with pytest.raises(ReviewerError, match="family"):
        get_interface("nemotron-safety", {"family": "nemotron-9"})


def test_paper_configuration_is_the_model_the_paper_names() -> None:
    from pathlib import Path

    from authpairs.runs.config import load_config

    path = Path(__file__).resolve().parents[3] / "configs" / "paper" / "nemotron-safety.yaml"
    reviewer = load_config(path).reviewer
    assert reviewer.backend.model == "nvidia/Nemotron-3.5-Content-Safety"
    assert reviewer.interface_options == {"family": "content-safety", "thinking": True,
                                          "categories": True}
    assert reviewer.sampling.temperature == 0.0
    assert "35645ed3543b" in path.read_text()  # the revision the paper evaluated
