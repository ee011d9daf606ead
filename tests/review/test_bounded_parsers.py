"""Parsers are bounded and panic-proof, match labels in ASCII case only, and share one
finish-reason mapping.

* every interface (native guardrail formats included) and the HTTP guardrail refuse an answer
  over their text cap as ``too_large`` *before* any decoding or library call (checked by making
  the expensive step fail the test if it is reached), so a 1 MB answer costs a length check;
  a Harmony answer's token ids are bounded (count, header length) before Harmony reads them;
* a library that raises anything, a ``BaseException`` such as pyo3's ``PanicException``
  included, gives ``parser_error``; KeyboardInterrupt, SystemExit and task cancellation
  propagate;
* no Unicode look-alike of a label letter (one that ``lower``, ``upper`` or ``casefold`` turns
  into an ASCII letter, e.g. LONG S, KELVIN SIGN, DOTLESS I) ever gives a decision;
* ``stop_sequence``, ``max_tokens``, ``length``, ``model_length`` and a missing finish reason
  mean the same for every interface (:func:`authpairs.review.parsing.finish_outcome`);
* the HTTP guardrail's reply is strict JSON: duplicate keys, NaN, deep nesting and fences are
  unavailable.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from authpairs.backends.base import ChatResponse
from authpairs.review import parsing
from authpairs.review.guardrails import safeguard
from authpairs.review.guardrails.answers import parse_label, parse_with
from authpairs.review.guardrails.http_service import HttpGuardrailOptions, HttpGuardrailReviewer
from authpairs.review.guardrails.native import NativeInterface
from authpairs.review.interfaces import INTERFACES, get_interface
from authpairs.review.outcome import Decision, OutcomeStatus, ReasonCode, ReviewOutcome
from authpairs.runs.reviewed import safe_parse
from tests.review.answers import harmony_ids, harmony_parts, harmony_response, response

_CHECKS = '[{"requirement": "r", "finding": "f", "evidence": []}]'
ALLOW_ANSWERS = {
    "direct": '{"decision": "ALLOW"}',
    "structured": '{"checks": ' + _CHECKS + ', "decision": "ALLOW"}',
    "schema": '{"checks": ' + _CHECKS + ', "decision": "ALLOW"}',
    "granite-guardian": "<score> no </score>",
    "llama-guard": "safe",
    "nemotron-safety": "User Safety: safe",
    "policyguard": "no_violation",
    "qwen3guard": "Safety: Safe",
    "safeguard": "<|channel|>final<|message|>0<|return|>",
}
"""A documented ALLOW answer of each interface (free text in them holds no ASCII letter that
has a look-alike, so any substitution below touches a label, key or tag)."""
WITH_ANALYSIS = ("<|channel|>analysis<|message|>-<|end|><|start|>assistant<|channel|>final"
                 "<|message|>0<|return|>")
"""A safeguard ALLOW answer with an analysis message ``-`` (a non-final channel's name and
text are free: they never decide)."""
LENGTH_OK = {"policyguard"}
"""Interfaces whose whole label may end exactly at the token limit."""


def _allow(name: str, finish_reason: str | None = "stop") -> ReviewOutcome:
    return get_interface(name).parse(response(name, ALLOW_ANSWERS[name], finish_reason))


def test_every_interface_has_an_allow_answer_here() -> None:
    assert set(INTERFACES.names()) == set(ALLOW_ANSWERS)
    for name in ALLOW_ANSWERS:
        assert _allow(name).decision is Decision.ALLOW, name


def _look_alikes() -> dict[str, list[str]]:
    """ASCII letter -> the non-ASCII characters that case mapping turns into it."""
    found: dict[str, list[str]] = {}
    for code in range(0x80, 0x30000):
        char = chr(code)
        for mapped in {char.lower(), char.upper(), char.casefold()}:
            if len(mapped) == 1 and mapped.isascii() and mapped.isalpha():
                found.setdefault(mapped.lower(), []).append(char)
    return found


LOOK_ALIKES = _look_alikes()


def test_the_look_alikes_include_the_known_ones() -> None:
    assert "\u017f" in LOOK_ALIKES["s"] and "\u212a" in LOOK_ALIKES["k"]
    assert "\u0131" in LOOK_ALIKES["i"]


@pytest.mark.parametrize("name", sorted(ALLOW_ANSWERS))
def test_no_look_alike_letter_gives_a_decision(name: str) -> None:
    answer = ALLOW_ANSWERS[name]
    tried = 0
    for at, letter in enumerate(answer):
        for char in LOOK_ALIKES.get(letter.lower(), []):
            text = answer[:at] + char + answer[at + 1:]
            outcome = get_interface(name).parse(response(name, text))
            assert outcome.status is OutcomeStatus.UNAVAILABLE, (name, text, outcome)
            tried += 1
    assert tried > 0


def test_named_label_parser_folds_ascii_case_only() -> None:
    assert parse_label(" allow ").decision is Decision.ALLOW
    assert parse_label("Block").decision is Decision.BLOCK
    for text in ("BLOC\u212a", "UN\u212aNOWN", "\uff21LLOW", "ALLO\u0174"):
        assert parse_label(text).reason_code is ReasonCode.NO_LABEL, text


def test_issue_examples_are_not_allow() -> None:
    for name, text in (("qwen3guard", "\u017fafety: Safe"),
                       ("granite-guardian", "\u2039\u017fcore> no \u2039/\u017fcore>"),
                       ("nemotron-safety", "User \u017fafety: safe"),
                       ("nemotron-safety", '{"User Safety": "\u017fafe"}')):
        outcome = get_interface(name, {"family": "nemoguard-8b"} if "{" in text else None
                                ).parse(ChatResponse(text=text, finish_reason="stop"))
        assert outcome.status is OutcomeStatus.UNAVAILABLE, (name, text)


@pytest.mark.parametrize("name", sorted(ALLOW_ANSWERS))
@pytest.mark.parametrize("finish", [None, "stop", "stop_sequence", "eos", "end_turn",
                                    "length", "max_tokens", "model_length", "content_filter",
                                    "tool_calls"])
def test_every_interface_maps_finish_reasons_with_the_shared_helper(name: str,
                                                                    finish: str | None) -> None:
    outcome = _allow(name, finish)
    expected = parsing.finish_outcome(finish, length_ok=name in LENGTH_OK)
    if expected is None:
        assert outcome.decision is Decision.ALLOW, (name, finish, outcome)
    else:
        assert outcome == expected, (name, finish, outcome)
    if finish is None:  # a missing finish reason is a clean stop (the text must still conform)
        assert outcome.decision is Decision.ALLOW


class _Reached(Exception):
    """Raised by an expensive step that a capped answer must never reach."""


def _forbid(*_: Any, **__: Any) -> Any:
    raise _Reached


@pytest.mark.parametrize("name", sorted(ALLOW_ANSWERS))
def test_an_answer_over_the_cap_is_refused_before_any_work(name: str,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    interface = get_interface(name)
    monkeypatch.setattr(parsing, "_extract_payload", _forbid)
    monkeypatch.setattr(parsing, "_too_deep", _forbid)
    monkeypatch.setattr(safeguard, "parse_harmony_tokens", _forbid)
    monkeypatch.setattr(safeguard, "harmony_reasoning", _forbid)
    if isinstance(interface, NativeInterface):
        monkeypatch.setattr(type(interface), "parse_response", _forbid)
        cap = interface.max_chars
    else:
        cap = parsing.MAX_RESPONSE_CHARS
    assert cap <= parsing.MAX_RESPONSE_CHARS
    for text in (ALLOW_ANSWERS[name] + " " * cap, "x" * 1_000_000 + ALLOW_ANSWERS[name]):
        outcome = interface.parse(ChatResponse(text=text, finish_reason="stop"))
        assert outcome.reason_code is ReasonCode.TOO_LARGE, (name, outcome)


def test_harmony_is_never_given_too_many_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(safeguard, "parse_harmony_tokens", _forbid)
    monkeypatch.setattr(safeguard, "harmony_reasoning", _forbid)
    interface = get_interface("safeguard")
    ids = harmony_ids(WITH_ANALYSIS.replace("-", " -" * safeguard.MAX_HARMONY_TOKENS))
    answer = ChatResponse(text="<|channel|>final<|message|>0", output_token_ids=ids,
                          finish_reason="stop")
    assert interface.parse(answer).reason_code is ReasonCode.TOO_LARGE
    assert interface.finish(answer) is answer


def test_harmony_is_never_given_too_many_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    def answer(messages: int) -> ChatResponse:
        """An analysis message, more analysis messages, a final one: ``messages`` in all."""
        more = "<|start|>assistant<|channel|>analysis<|message|>-<|end|>" * (messages - 2)
        return response("safeguard", "<|channel|>analysis<|message|>-<|end|>" + more
                        + "<|start|>assistant<|channel|>final<|message|>0<|return|>")

    interface = get_interface("safeguard")
    assert interface.parse(answer(safeguard.MAX_HARMONY_MESSAGES)).decision is Decision.ALLOW
    monkeypatch.setattr(safeguard, "parse_harmony_tokens", _forbid)
    monkeypatch.setattr(safeguard, "harmony_reasoning", _forbid)
    over = answer(safeguard.MAX_HARMONY_MESSAGES + 1)
    assert interface.parse(over).reason_code is ReasonCode.TOO_LARGE
    assert interface.finish(over) is over


def test_harmony_is_never_given_a_long_header(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(safeguard, "parse_harmony_tokens", _forbid)
    monkeypatch.setattr(safeguard, "harmony_reasoning", _forbid)
    interface = get_interface("safeguard")
    header = " word" * (safeguard.MAX_HARMONY_HEADER_TOKENS + 1)
    fake = "<|message|>0<|end|>" * 3  # characters: they end no header
    for ids in (harmony_ids(header + "<|message|>0<|return|>"),
                harmony_ids("<|channel|>analysis<|message|>-<|end|>" + header + "<|message|>0"),
                harmony_ids("<|channel|>final<|message|>0<|return|>" + header),
                harmony_parts(("<|channel|>final", True), (fake + header, False),
                              ("<|message|>0", True))):
        answer = harmony_response(ids)
        assert interface.parse(answer).reason_code is ReasonCode.MALFORMED, answer.text
        assert interface.finish(answer) is answer


def test_a_megabyte_harmony_answer_is_unavailable_not_a_crash() -> None:
    for text in ("a" * 1_000_000, "<" * 1_000_000):  # both panic inside openai-harmony
        response = ChatResponse(text=text, finish_reason="stop")
        interface = get_interface("safeguard")
        assert interface.parse(interface.finish(response)).reason_code is ReasonCode.TOO_LARGE


def test_a_harmony_answer_at_the_cap_is_parsed() -> None:
    body = ("word " * 199 + "x" * 998 + " ")
    analysis = (body * (safeguard.MAX_HARMONY_CHARS // len(body)))[:safeguard.MAX_HARMONY_CHARS
                                                                   - 200]
    analysis = analysis[:analysis.rfind(" ") + 1]  # end at a space: no run joins the tags
    text = WITH_ANALYSIS.replace("-", analysis)
    assert len(text) <= safeguard.MAX_HARMONY_CHARS
    assert get_interface("safeguard").parse(response("safeguard", text)
                                            ).decision is Decision.ALLOW


class PanicException(BaseException):
    """Stands for pyo3's ``PanicException`` (a ``BaseException``, not an ``Exception``)."""


def _panic(*_: Any, **__: Any) -> Any:
    raise PanicException("called `Result::unwrap()` on an `Err` value")


def test_a_library_panic_is_parser_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(safeguard, "parse_harmony_tokens", _panic)
    monkeypatch.setattr(safeguard, "harmony_reasoning", _panic)
    interface = get_interface("safeguard")
    answer = response("safeguard", ALLOW_ANSWERS["safeguard"])
    assert interface.finish(answer) is answer
    outcome = interface.parse(answer)
    assert outcome.reason_code is ReasonCode.PARSER_ERROR
    assert "PanicException" in outcome.detail


@pytest.mark.parametrize("name", sorted(n for n in ALLOW_ANSWERS
                                        if isinstance(get_interface(n), NativeInterface)))
def test_any_native_parser_failure_is_parser_error(name: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    interface = get_interface(name)
    monkeypatch.setattr(type(interface), "parse_response", _panic)
    outcome = interface.parse(response(name, ALLOW_ANSWERS[name]))
    assert outcome.reason_code is ReasonCode.PARSER_ERROR


@pytest.mark.parametrize("fatal", [KeyboardInterrupt, SystemExit, asyncio.CancelledError])
def test_interrupts_are_never_swallowed(fatal: type[BaseException],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupt(*_: Any, **__: Any) -> Any:
        raise fatal

    monkeypatch.setattr(safeguard, "parse_harmony_tokens", interrupt)
    monkeypatch.setattr(safeguard, "harmony_reasoning", interrupt)
    interface = get_interface("safeguard")
    answer = response("safeguard", ALLOW_ANSWERS["safeguard"])
    with pytest.raises(fatal):
        interface.parse(answer)
    with pytest.raises(fatal):
        interface.finish(answer)
    with pytest.raises(fatal):
        safe_parse(interface, answer)


class _Raises:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def parse(self, response: ChatResponse) -> ReviewOutcome:
        raise self.exc


def test_safe_parse_turns_any_base_exception_into_parser_error() -> None:
    response = ChatResponse(text="x", finish_reason="stop")
    for exc in (PanicException("boom"), ValueError("bad"), MemoryError()):
        outcome = safe_parse(_Raises(exc), response)
        assert outcome.reason_code is ReasonCode.PARSER_ERROR
        assert type(exc).__name__ in outcome.detail
    for fatal in (KeyboardInterrupt(), SystemExit(3), asyncio.CancelledError()):
        with pytest.raises(type(fatal)):
            safe_parse(_Raises(fatal), response)


def test_named_parsers_are_capped_and_guarded(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_with("label", "ALLOW" + " " * parsing.MAX_RESPONSE_CHARS
                      ).reason_code is ReasonCode.TOO_LARGE
    monkeypatch.setattr(safeguard, "parse_harmony_tokens", _panic)
    # a named parser gets text alone: a Harmony answer without its token ids never decides
    assert parse_with("safeguard", ALLOW_ANSWERS["safeguard"]
                      ).reason_code is ReasonCode.NO_TOKEN_IDS


def _http(**options: Any) -> HttpGuardrailReviewer:
    return HttpGuardrailReviewer(HttpGuardrailOptions(url="http://guard.invalid", **options))


@pytest.mark.parametrize(("reply", "reason"), [
    ('{"decision": "BLOCK", "decision": "ALLOW"}', ReasonCode.DUPLICATE_KEY),
    ('{"decision": "ALLOW", "score": NaN}', ReasonCode.NON_FINITE),
    ('{"decision": "ALLOW", "score": Infinity}', ReasonCode.NON_FINITE),
    ('{"decision": "ALLOW", "x": ' + "[" * 100 + "]" * 100 + "}", ReasonCode.TOO_DEEP),
    ('{"decision": "ALLOW", "n": 1' + "0" * 200 + "}", ReasonCode.TOO_LARGE),
    ('```json\n{"decision": "ALLOW"}\n```', ReasonCode.NOT_JSON),
    ('{"decision": "ALLOW"} {"decision": "ALLOW"}', ReasonCode.EXTRA_PROSE),
    ('{"decision": "ALLOW"} trailing', ReasonCode.EXTRA_PROSE),
    ('{"decision": "ALLOW\\ud800"}', ReasonCode.INVALID_TEXT),
    ("", ReasonCode.EMPTY),
    ('{"decision": "ALLOW"}' + " " * parsing.MAX_RESPONSE_CHARS, ReasonCode.TOO_LARGE),
])
def test_the_http_reply_is_read_strictly(reply: str, reason: ReasonCode) -> None:
    outcome = _http().parse(ChatResponse(text=reply, finish_reason="stop"))
    assert outcome.status is OutcomeStatus.UNAVAILABLE and outcome.reason_code is reason


def test_a_clean_http_reply_decides() -> None:
    assert _http().parse(ChatResponse(text=' {"decision": "allow"}\n', finish_reason="stop")
                         ).decision is Decision.ALLOW


def test_an_oversized_http_reply_is_not_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parsing, "_too_deep", _forbid)
    reply = '{"decision": "ALLOW"}' + " " * parsing.MAX_RESPONSE_CHARS
    assert _http().parse(ChatResponse(text=reply, finish_reason="stop")
                         ).reason_code is ReasonCode.TOO_LARGE


def test_http_values_fold_ascii_case_only() -> None:
    guard = _http(values={"ok": "ALLOW", "stop": "block"})
    assert guard.parse(ChatResponse(text='{"decision": "OK"}', finish_reason="stop")
                       ).decision is Decision.ALLOW
    assert guard.parse(ChatResponse(text='{"decision": "Stop"}', finish_reason="stop")
                       ).decision is Decision.BLOCK
    for value in ("O\u212a", "\u017fTOP"):
        outcome = guard.parse(ChatResponse(text=f'{{"decision": "{value}"}}',
                                           finish_reason="stop"))
        assert outcome.reason_code is ReasonCode.INVALID_VALUE, value


@pytest.mark.parametrize("finish", [None, "stop", "stop_sequence", "eos", "end_turn", "length",
                                    "max_tokens", "model_length", "content_filter"])
def test_nemo_self_check_maps_finish_reasons_with_the_shared_helper(finish: str | None) -> None:
    pytest.importorskip("nemoguardrails")
    from authpairs.backends.config import SamplingConfig
    from authpairs.review.guardrails.nemo import NemoResponse, NemoSelfCheckReviewer

    reviewer = NemoSelfCheckReviewer(None, SamplingConfig())  # type: ignore[arg-type]
    outcome = reviewer.parse(NemoResponse(text="safe", finish_reason=finish,
                                          native_allowed=True))
    expected = parsing.finish_outcome(finish, length_ok=True)
    if expected is None:
        assert outcome.decision is Decision.ALLOW
        assert ("token limit" in outcome.detail) is (finish in parsing.LENGTH_STOPS)
    else:
        assert outcome == expected
    oversized = reviewer.parse(NemoResponse(text="safe" + " " * parsing.MAX_RESPONSE_CHARS,
                                            finish_reason="stop", native_allowed=True))
    assert oversized.reason_code is ReasonCode.TOO_LARGE


def test_a_run_with_megabyte_harmony_answers_records_them_unavailable(tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from authpairs.cli import app
    from tests.runs import readback_script

    readback_script.ANSWER = "a" * 1_000_000  # panicked inside openai-harmony, uncapped
    config = tmp_path / "safeguard.yaml"
    config.write_text("reviewer:\n  interface: safeguard\n  backend:\n    kind: scripted\n"
                      "    script: tests.runs.readback_script:answer\n")
    db = tmp_path / "r.sqlite"
    result = CliRunner().invoke(app, ["run", "--config", str(config), "--dataset", "examples",
                                      "--split", "all", "--records", str(db), "--run-id", "big",
                                      "--no-enforce", "--quiet"])
    assert result.exit_code == 0, result.output
    assert "too_large=8" in result.output
    audit = CliRunner().invoke(app, ["audit", "big", "--records", str(db)])
    assert audit.exit_code == 0 and "audit passed" in audit.output, audit.output
