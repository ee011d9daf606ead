"""Runs recorded before a guardrail's rendering changed: the audit re-checks them by the rules they
were made under (honest ones pass, forged ones fail), and they are never resumed under the new
rendering.

The old safeguard run is written here as the version before token ids wrote it, independently of
:mod:`authpairs.review.guardrails.earlier`: the decoded Harmony prompt sent as text, the answer
recorded as text without token ids, the decision read by Harmony's parser from the text encoded
with every special token allowed, and no rendering among the header's template hashes.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.cases.models import PublicCase
from authpairs.review.guardrails.harmony_vocab import harmony_encoding
from authpairs.review.guardrails.llama_guard import LlamaGuardInterface
from authpairs.review.guardrails.nemotron import NemotronSafetyInterface
from authpairs.review.guardrails.safeguard import SafeguardInterface
from authpairs.review.interfaces import RENDERING_KEY, get_interface
from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome
from authpairs.runs.api import run_async
from authpairs.runs.audit import audit_run
from authpairs.runs.config import RunConfig
from authpairs.runs.records import AttemptRecord, stored_json
from authpairs.runs.store import RecordStore, RecordStoreError
from tests.runs.test_tamper import _forge

RUN = "old-safeguard"
_FINAL = "<|start|>assistant<|channel|>final<|message|>{}<|return|>"
_ANALYSIS = "<|channel|>analysis<|message|>{}<|end|>"


def _old_answer(request: ChatRequest) -> str:
    """Harmony completions as text, chosen by the input: 0, 1, no final message, a run of
    characters too long for the old text bounds, and a final label that is not 0 or 1."""
    pick = int(request.sha256()[:8], 16) % 5
    thinking = _ANALYSIS.format("The policy asks for a signed approval.")
    return [thinking + _FINAL.format("0"), thinking + _FINAL.format("1"), thinking,
            _ANALYSIS.format("x" * 1_500) + _FINAL.format("1"),
            thinking + _FINAL.format("maybe")][pick]


def _old_parse(text: str) -> ReviewOutcome:
    """The text parser of the version before token ids (its essentials)."""
    import openai_harmony

    if any(len(word) > 1_000 for word in text.split()):
        return ReviewOutcome.unavailable(ReasonCode.TOO_LARGE, "a long run")
    encoding = harmony_encoding()
    messages = encoding.parse_messages_from_completion_tokens(
        encoding.encode(text, allowed_special="all"), openai_harmony.Role.ASSISTANT)
    finals = [m for m in messages if m.channel == "final"]
    if not finals:
        return ReviewOutcome.unavailable(ReasonCode.NO_FINAL_CHANNEL, "no final")
    label = "".join(part.text for part in finals[0].content).strip()
    if label not in ("0", "1"):
        return ReviewOutcome.unavailable(ReasonCode.NO_LABEL, "not 0 or 1")
    return ReviewOutcome.decided(Decision.BLOCK if label == "1" else Decision.ALLOW)


class OldSafeguardReviewer:
    """safeguard as the version before token ids ran it."""

    def __init__(self) -> None:
        self.current = SafeguardInterface()

    def render(self, case: PublicCase) -> ChatRequest:
        text = harmony_encoding().decode(self.current.prompt_tokens(case))
        return ChatRequest(prompt=text, options={"skip_special_tokens": False})

    async def answer(self, request: ChatRequest) -> ChatResponse:
        assert request.prompt_token_ids is None
        return ChatResponse(text=_old_answer(request), finish_reason="stop")

    def parse(self, response: ChatResponse) -> ReviewOutcome:
        return _old_parse(response.text or "")

    def template_hashes(self) -> dict[str, str]:
        hashes = self.current.template_hashes()
        del hashes[RENDERING_KEY]
        return hashes

    def describe(self) -> dict[str, Any]:
        return {"interface": "safeguard", "backend": {"kind": "scripted"}}


def _config(records: Path) -> RunConfig:
    return RunConfig.model_validate({
        "dataset": "examples", "split": "all", "records": str(records), "run_id": RUN,
        "preflight": False, "reviewer": {"interface": "safeguard", "backend": {
            "kind": "scripted", "script": "tests.runs.test_earlier_renderings:_old_answer"}}})


@pytest.fixture(scope="module")
def old_records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    records = tmp_path_factory.mktemp("old") / "records.sqlite"
    import asyncio

    state = asyncio.run(run_async(_config(records), progress=False,
                                  reviewer=OldSafeguardReviewer()))
    assert state.missing == 0
    return records


def test_an_old_safeguard_run_passes_the_audit(old_records: Path, tmp_path: Path) -> None:
    copy = tmp_path / "records.sqlite"
    shutil.copyfile(old_records, copy)
    with RecordStore(copy) as store:
        attempts = [a for a in store.attempts(RUN) if a.kind == "formal"]
        assert attempts and all(a.output_token_ids is None and a.request is not None
                                and a.request.prompt_token_ids is None for a in attempts)
        statuses = {r.decision or r.reason_code for r in store.case_records(RUN)}
        assert {"ALLOW", "BLOCK", "no_final_channel"} <= {str(getattr(s, "value", s))
                                                          for s in statuses}
        report = audit_run(store, RUN)
    assert report.ok, [str(f) for f in report.findings]
    assert not report.skipped
    assert report.checked["decisions re-parsed"] == report.checked["inputs re-rendered"] == 8
    assert any("earlier rendering of safeguard" in what for what in report.checked)


def test_the_current_rules_would_have_called_every_old_decision_a_finding(
        old_records: Path) -> None:
    """Without the earlier rendering, every answer is no_token_ids and every input differs."""
    with RecordStore(old_records, readonly=True) as store:
        records = store.case_records(RUN)
        attempts = {a.case_id: a for a in store.attempts(RUN) if a.kind == "formal"}
    current = get_interface("safeguard")
    for record in records:
        attempt = attempts[record.case_id]
        outcome = current.parse(ChatResponse(text=attempt.output_text,
                                             finish_reason=attempt.finish_reason))
        assert outcome.reason_code is ReasonCode.NO_TOKEN_IDS


def forged_answer_findings(records: Path, copy: Path, run: str,
                           forge: Callable[[AttemptRecord], str | None]) -> tuple[str, list[str]]:
    """The case id of the first formal attempt of ``run`` whose output ``forge`` rewrites (in a
    copy of ``records``, every hash recomputed) and the audit's findings on the copy."""
    shutil.copyfile(records, copy)
    with RecordStore(copy) as store:
        conn = store.connection
        attempts = (AttemptRecord.model_validate_json(str(r["record_json"]))
                    for r in store.chain_rows(run) if r["entry"] == "attempt")
        attempt, text = next((a, t) for a in attempts if a.kind == "formal"
                             for t in [forge(a)] if t is not None)
        forged = attempt.model_copy(update={"output_text": text})
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("UPDATE attempts SET record_json=? WHERE run_id=? AND case_id=? AND "
                     "attempt_no=?", (stored_json(forged), run, attempt.case_id,
                                      attempt.attempt_no))
        _forge(store, run)
        conn.execute("COMMIT")
        return attempt.case_id, [str(f) for f in audit_run(store, run).findings]


async def assert_not_resumed(records: Path, copy: Path, config: RunConfig) -> None:
    """Running ``config`` again on a copy of ``records`` is refused: another rendering."""
    shutil.copyfile(records, copy)
    with pytest.raises(RecordStoreError, match=rf"run '{config.run_id}' .*rendered another way"
                       r".*\(rendering\).*choose another --run-id"):
        await run_async(config, progress=False)


def _to_block(attempt: AttemptRecord) -> str | None:
    text = attempt.output_text or ""
    return text.replace("final<|message|>0", "final<|message|>1") if (
        "final<|message|>0" in text) else None


def test_a_forged_old_answer_fails_the_audit(old_records: Path, tmp_path: Path) -> None:
    case_id, findings = forged_answer_findings(old_records, tmp_path / "records.sqlite", RUN,
                                               _to_block)
    assert any(case_id in f and "[re-parse]" in f for f in findings), findings


async def test_an_old_run_is_not_resumed_under_the_new_rendering(old_records: Path,
                                                                 tmp_path: Path) -> None:
    copy = tmp_path / "records.sqlite"
    await assert_not_resumed(old_records, copy, _config(copy))


def test_renderings_declared_and_their_earlier_forms() -> None:
    safeguard = SafeguardInterface()
    assert safeguard.template_hashes()[RENDERING_KEY]
    assert safeguard.as_recorded(safeguard.template_hashes()) is safeguard
    llama = LlamaGuardInterface(version=4)
    earlier = llama.as_recorded({})
    assert RENDERING_KEY not in earlier.template_hashes()
    assert earlier.template_hashes()["llama_guard.j2"] != llama.template_hashes()[
        "llama_guard.j2"]
    nemotron = NemotronSafetyInterface()
    assert RENDERING_KEY in nemotron.template_hashes()
    old = nemotron.as_recorded({})
    assert isinstance(old, NemotronSafetyInterface) and old.categories
    assert old.template_hashes() == {k: v for k, v in nemotron.template_hashes().items()
                                     if k != RENDERING_KEY}
    for given in (True, False):  # written explicitly: rendered as before
        explicit = NemotronSafetyInterface(categories=given)
        assert RENDERING_KEY not in explicit.template_hashes()
        assert explicit.as_recorded({}) is explicit
