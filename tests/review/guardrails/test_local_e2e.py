"""End to end through the embedded SmolLM2 server: every native interface and the real NeMo action.

Plumbing, not accuracy: each request reaches the right endpoint (chat or raw completions), the
answer is recorded, and the strict parser classifies it (SmolLM2 rarely speaks these formats, so
most outcomes are unavailable -- never a crash, never an unclean ALLOW).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from authpairs.backends.config import SamplingConfig
from authpairs.backends.local_server import LocalServerBackend
from authpairs.cases.dataset import Dataset
from authpairs.review.interfaces import get_interface
from authpairs.review.outcome import OutcomeStatus
from authpairs.review.reviewers import ModelReviewer
from authpairs.runs.api import run_async
from authpairs.runs.config import RunConfig
from authpairs.runs.store import RecordStore

pytestmark = [pytest.mark.slow, pytest.mark.integration]

NATIVE = ("safeguard", "granite-guardian", "policyguard", "qwen3guard", "nemotron-safety",
          "llama-guard")
TEXT_PROMPT = {"safeguard": {"prompt": "text"}, "llama-guard": {"prompt": "text"}}
"""SmolLM2's vocabulary is neither Harmony's nor Llama's: their token-id prompts are refused by
the server (tests/backends/test_token_ids_local.py), so the plumbing runs with the prompt as
text (a clean case: nothing in it spells a control token)."""
SAMPLING = SamplingConfig(temperature=0.0, seed=7, max_tokens=24, repetition_penalty=1.3)


async def test_every_native_interface_through_the_local_server(examples: Dataset) -> None:
    case = examples.cases[0].public
    async with LocalServerBackend(n_ctx=8192, n_parallel=2) as backend:
        for name in NATIVE:
            reviewer = ModelReviewer(get_interface(name, TEXT_PROMPT.get(name)), backend,
                                     SAMPLING)
            request = reviewer.render(case)
            response = await reviewer.answer(request)
            assert response.text is not None, name
            assert response.output_tokens > 0 and response.input_tokens > 0, name
            assert response.finish_reason in ("stop", "length"), name
            outcome = reviewer.parse(response)
            if outcome.status is OutcomeStatus.DECISION:
                assert outcome.reason_code is None
            else:
                assert outcome.reason_code is not None and outcome.dispatch.value == "BLOCK"


async def test_safeguard_run_records_raw_completions(records_path: Path) -> None:
    config = RunConfig.model_validate({
        "dataset": "examples", "split": "all", "limit": 2, "enforce": False,
        "records": str(records_path), "concurrency": 2,
        "reviewer": {"interface": "safeguard",
                     "interface_options": {"reasoning_effort": "low", "prompt": "text"},
                     "backend": {"kind": "local", "n_ctx": 8192, "n_parallel": 2},
                     "sampling": SAMPLING.model_dump()}})
    state = await run_async(config, progress=False)
    assert state.completed_now == 2 and not state.infrastructure_failed
    with RecordStore(records_path) as store:
        info = store.get_run(state.run_id)
        attempts = store.attempts(state.run_id)
    assert info is not None and "safeguard_policy.j2" in info.template_sha256
    assert all(a.kind == "formal" and a.output_text is not None for a in attempts)
    # llama.cpp sends no token ids unless asked for logprobs: the answers are text only, and
    # unavailable (cut at the limit, or without ids)
    assert all(a.output_token_ids is None for a in attempts)
    with RecordStore(records_path) as store:
        reasons = {r.reason_code for r in store.case_records(state.run_id)}
    assert reasons <= {"length", "no_token_ids"}


async def test_real_nemo_action_against_the_local_server(records_path: Path) -> None:
    pytest.importorskip("nemoguardrails")
    config = RunConfig.model_validate({
        "dataset": "examples", "split": "all", "limit": 3, "enforce": True,
        "records": str(records_path), "concurrency": 2,
        "reviewer": {"guardrail": "nemo-self-check",
                     "backend": {"kind": "local", "n_ctx": 8192, "n_parallel": 2},
                     "sampling": {"temperature": 0.0, "seed": 7, "max_tokens": 16}}})
    state = await run_async(config, progress=False)
    assert state.completed_now == 3 and not state.infrastructure_failed
    with RecordStore(records_path) as store:
        records = store.case_records(state.run_id)
        info = store.get_run(state.run_id)
    assert info is not None and info.config["reviewer"]["guardrail"] == "nemo-self-check"
    assert "nemo_self_check.j2" in info.template_sha256
    for record in records:
        assert record.output_tokens > 0
        if record.status is OutcomeStatus.UNAVAILABLE:
            assert record.reason_code in ("native_fallback", "empty", "length")
