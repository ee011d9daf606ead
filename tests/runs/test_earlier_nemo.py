"""A nemo-self-check run recorded before ``<think>`` handling: the audit re-checks it by the
parse it was made under (honest records pass, a forged answer fails), and it is never resumed
under the new rendering.

The old run is written here as that version wrote it, independently of
:mod:`authpairs.review.guardrails.earlier`: NeMo's real action decides, the record's outcome is
read from the answer's whole text (no ``<think>`` block removed), and the header's template
hashes hold no rendering.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.backends.config import SamplingConfig
from authpairs.cases.models import PublicCase
from authpairs.review.interfaces import RENDERING_KEY
from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome
from authpairs.runs.api import run_async
from authpairs.runs.audit import audit_run, reparse
from authpairs.runs.config import RunConfig
from authpairs.runs.records import AttemptRecord
from authpairs.runs.store import RecordStore
from tests.runs.test_earlier_renderings import assert_not_resumed, forged_answer_findings

pytest.importorskip("nemoguardrails")

RUN = "old-nemo"
THINK = "<think>The grant is active.</think> No"
ANSWERS = ("Yes", "No", THINK)


def old_answer(request: ChatRequest) -> str:
    """Yes, No, or No after a ``<think>`` block, chosen by the input."""
    return ANSWERS[int(request.sha256()[:8], 16) % len(ANSWERS)]


def _old_parse(response: ChatResponse) -> ReviewOutcome:
    """The parse of the version before ``<think>`` handling (its essentials): the first two
    normalised words of the whole text, NeMo's Boolean when the action ran, else NeMo's own
    ``is_content_safe`` over the whole text."""
    import re

    from nemoguardrails.llm.output_parsers import is_content_safe

    text = response.text or ""
    words = re.sub(r"\W+", " ", text.lower().strip()).split(" ")[:2]
    if not {"safe", "unsafe", "yes", "no"} & set(words):
        return ReviewOutcome.unavailable(ReasonCode.NATIVE_FALLBACK, "fell back")
    allowed = getattr(response, "native_allowed", None)
    if allowed is None:
        allowed = bool(is_content_safe(text)[0])
    return ReviewOutcome.decided(Decision.ALLOW if allowed else Decision.BLOCK)


class OldNemoReviewer:
    """nemo-self-check as the version before ``<think>`` handling ran it."""

    def __init__(self, current: Any) -> None:
        self.current = current

    def render(self, case: PublicCase) -> ChatRequest:
        return self.current.render(case)  # type: ignore[no-any-return]

    async def answer(self, request: ChatRequest) -> ChatResponse:
        return await self.current.answer(request)  # type: ignore[no-any-return]

    def parse(self, response: ChatResponse) -> ReviewOutcome:
        return _old_parse(response)

    def template_hashes(self) -> dict[str, str]:
        hashes: dict[str, str] = self.current.template_hashes()
        del hashes[RENDERING_KEY]
        return hashes

    def describe(self) -> dict[str, Any]:
        return self.current.describe()  # type: ignore[no-any-return]


def _config(records: Path) -> RunConfig:
    return RunConfig.model_validate({
        "dataset": "examples", "split": "all", "records": str(records), "run_id": RUN,
        "enforce": False, "preflight": False, "reviewer": {
            "guardrail": "nemo-self-check", "backend": {
                "kind": "scripted", "script": "tests.runs.test_earlier_nemo:old_answer"}}})


async def _old_run(config: RunConfig) -> Any:
    from authpairs.review.guardrails.nemo import NemoSelfCheckGuardrail

    async with config.reviewer.backend.create() as backend:
        current = NemoSelfCheckGuardrail().build("nemo-self-check", {}, backend,
                                                 config.reviewer.sampling)
        return await run_async(config, progress=False, reviewer=OldNemoReviewer(current))


@pytest.fixture(scope="module")
def old_records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    records = tmp_path_factory.mktemp("old-nemo") / "records.sqlite"
    state = asyncio.run(_old_run(_config(records)))
    assert state.missing == 0
    return records


def _think_attempts(store: RecordStore) -> list[AttemptRecord]:
    return [a for a in store.attempts(RUN) if a.kind == "formal" and a.output_text == THINK]


def test_an_old_nemo_run_with_think_answers_passes_the_audit(old_records: Path,
                                                             tmp_path: Path) -> None:
    copy = tmp_path / "records.sqlite"
    shutil.copyfile(old_records, copy)
    with RecordStore(copy) as store:
        thinking = _think_attempts(store)
        assert thinking
        by_case = {r.case_id: r for r in store.case_records(RUN)}
        assert all(by_case[a.case_id].reason_code == ReasonCode.NATIVE_FALLBACK.value
                   for a in thinking)
        report = audit_run(store, RUN)
    assert report.ok, [str(f) for f in report.findings]
    assert not report.skipped
    assert report.checked["decisions re-parsed"] == report.checked["inputs re-rendered"] == 8
    assert any("earlier rendering of nemo-self-check" in what for what in report.checked)


def test_the_current_parse_would_have_called_the_think_answers_findings(
        old_records: Path) -> None:
    """Read as NeMo's llm_call reads it, each recorded fallback is an ALLOW."""
    from authpairs.review.guardrails.nemo import NemoSelfCheckReviewer
    from authpairs.runs.reviewers import rebuilt_reviewer

    current = rebuilt_reviewer(_config(old_records).reviewer)
    assert isinstance(current, NemoSelfCheckReviewer)
    with RecordStore(old_records, readonly=True) as store:
        thinking = _think_attempts(store)
    assert thinking and all(reparse(current, a).decision is Decision.ALLOW
                            for a in thinking)


def test_a_forged_old_nemo_answer_fails_the_audit(old_records: Path, tmp_path: Path) -> None:
    """A think answer rewritten to a plain 'No' (an ALLOW) against its recorded fallback."""
    case_id, findings = forged_answer_findings(
        old_records, tmp_path / "records.sqlite", RUN,
        lambda attempt: "No" if attempt.output_text == THINK else None)
    assert any(case_id in f and "[re-parse]" in f for f in findings), findings


async def test_an_old_nemo_run_is_not_resumed_under_the_new_rendering(old_records: Path,
                                                                      tmp_path: Path) -> None:
    copy = tmp_path / "records.sqlite"
    await assert_not_resumed(old_records, copy, _config(copy))


def test_the_nemo_rendering_is_declared_and_its_earlier_form() -> None:
    from authpairs.review.guardrails.earlier import EarlierNemoSelfCheck
    from authpairs.review.guardrails.nemo import NemoSelfCheckReviewer

    class _Unused:
        name = "unused"

        def describe(self) -> dict[str, Any]:
            return {}

    nemo = NemoSelfCheckReviewer(_Unused(), SamplingConfig())  # type: ignore[arg-type]
    hashes = nemo.template_hashes()
    assert hashes[RENDERING_KEY]
    assert nemo.as_recorded(hashes) is nemo
    earlier = nemo.as_recorded({})
    assert isinstance(earlier, EarlierNemoSelfCheck)
    assert earlier.template_hashes() == {k: v for k, v in hashes.items() if k != RENDERING_KEY}
    answer = ChatResponse(text=THINK, finish_reason="stop")
    assert nemo.parse(answer).decision is Decision.ALLOW
    assert earlier.parse(answer).reason_code is ReasonCode.NATIVE_FALLBACK
