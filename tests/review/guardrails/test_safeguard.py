"""Safeguard: Harmony rendering (token ids), frozen date, reasoning effort, reasoning tokens, raw
completion with token ids in and out."""

from __future__ import annotations

import json

import httpx
import pytest

from authpairs.backends.base import ChatResponse
from authpairs.backends.config import SamplingConfig
from authpairs.backends.openai_http import OpenAIBackend
from authpairs.cases.dataset import Dataset
from authpairs.errors import ReviewerError
from authpairs.review.guardrails.harmony_vocab import O200K_SHA256, ensure_vocab, harmony_encoding
from authpairs.review.interfaces import get_interface
from authpairs.review.reviewers import ModelReviewer
from tests.loopback import json_service
from tests.review.answers import harmony_ids, response

ANSWER = ("<|channel|>analysis<|message|>Delegation revoked before the refund.<|end|>"
          "<|start|>assistant<|channel|>final<|message|>1<|return|>")


def test_prompt_is_harmony_with_policy_as_developer_message(examples: Dataset) -> None:
    case = examples.cases[0].public
    request = get_interface("safeguard").render(case)
    assert request.messages == [] and request.prompt is not None
    prompt = request.prompt
    assert prompt.startswith("<|start|>system<|message|>")
    assert "Current date: 2026-10-10" in prompt and "Reasoning: medium" in prompt
    developer = prompt.split("<|start|>developer<|message|>", 1)[1].split("<|end|>", 1)[0]
    assert case.policy.text in developer
    user = prompt.split("<|start|>user<|message|>", 1)[1].split("<|end|>", 1)[0]
    assert case.request.resource in user and case.policy.text not in user
    assert prompt.endswith("<|start|>assistant")
    assert request.options == {"skip_special_tokens": False, "return_token_ids": True}
    assert request.prompt_token_ids is not None
    assert harmony_encoding().decode(request.prompt_token_ids) == prompt


def test_prompt_text_is_an_option_without_token_ids(examples: Dataset) -> None:
    case = examples.cases[0].public
    tokens = get_interface("safeguard").render(case)
    text = get_interface("safeguard", {"prompt": "text"}).render(case)
    assert text.prompt_token_ids is None and text.prompt == tokens.prompt
    assert text.options == tokens.options and text.sha256() != tokens.sha256()
    with pytest.raises(ReviewerError, match="prompt must be one of tokens, text"):
        get_interface("safeguard", {"prompt": "ids"})


def test_effort_and_date_are_configurable_and_frozen(examples: Dataset) -> None:
    case = examples.cases[0].public
    high = get_interface("safeguard", {"reasoning_effort": "high",
                                       "rendering_date": "2025-01-02"}).render(case)
    assert "Reasoning: high" in (high.prompt or "")
    assert "Current date: 2025-01-02" in (high.prompt or "")
    again = get_interface("safeguard", {"reasoning_effort": "high",
                                        "rendering_date": "2025-01-02"}).render(case)
    assert again.sha256() == high.sha256()
    with pytest.raises(ReviewerError, match="reasoning_effort"):
        get_interface("safeguard", {"reasoning_effort": "extreme"})
    with pytest.raises(ReviewerError, match="rendering_date"):
        get_interface("safeguard", {"rendering_date": "today"})
    with pytest.raises(ReviewerError, match="interface_options"):
        get_interface("safeguard", {"colour": "red"})


def test_reasoning_tokens_are_recorded() -> None:
    finished = get_interface("safeguard").finish(response("safeguard", ANSWER))
    assert finished.reasoning == "Delegation revoked before the refund."
    assert finished.reasoning_tokens == len(harmony_ids("Delegation revoked before the refund."))
    text_only = ChatResponse(text=ANSWER, finish_reason="stop")
    assert get_interface("safeguard").finish(text_only) is text_only


def test_vocabulary_is_rebuilt_offline_and_verified(tmp_path: object) -> None:
    import hashlib
    from pathlib import Path

    folder = ensure_vocab(Path(str(tmp_path)))
    data = (folder / "o200k_base.tiktoken").read_bytes()
    assert hashlib.sha256(data).hexdigest() == O200K_SHA256


async def test_raw_prompt_goes_to_the_completions_endpoint(examples: Dataset) -> None:
    seen: list[tuple[str, dict[str, object]]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.url.path, json.loads(request.content)))
        return httpx.Response(200, json={"choices": [{"text": ANSWER, "finish_reason": "stop",
                                                      "token_ids": harmony_ids(ANSWER)}],
                                         "usage": {"prompt_tokens": 300,
                                                   "completion_tokens": 20}})

    backend = OpenAIBackend(["http://guard.test/v1"], "gpt-oss-safeguard-20b",
                            transport=httpx.MockTransport(handler))
    async with backend:
        reviewer = ModelReviewer(get_interface("safeguard"), backend,
                                 SamplingConfig(temperature=0.0, max_tokens=64))
        request = reviewer.render(examples.cases[0].public)
        response = await reviewer.answer(request)
    path, body = seen[0]
    assert path == "/v1/completions"
    assert body["prompt"] == request.prompt_token_ids and "messages" not in body
    assert body["skip_special_tokens"] is False and body["return_token_ids"] is True
    assert body["max_tokens"] == 64
    assert response.output_token_ids == harmony_ids(ANSWER)
    assert response.output_tokens == 20 and response.reasoning_tokens > 0
    outcome = reviewer.parse(response)
    assert outcome.decision is not None and outcome.decision.value == "BLOCK"


def test_chat_requests_keep_their_identity() -> None:
    from authpairs.backends.base import ChatRequest
    from authpairs.cases.canonical import sha256_hex

    request = ChatRequest(messages=[{"role": "user", "content": "x"}])
    assert request.sha256() == sha256_hex({"messages": [{"role": "user", "content": "x"}],
                                           "response_format": None})


def test_configured_extra_body_merges_with_interface_options() -> None:
    from authpairs.backends.base import ChatRequest
    from authpairs.backends.openai_http import build_payload

    request = ChatRequest(messages=[{"role": "user", "content": "x"}],
                          options={"chat_template_kwargs": {"think": True}})
    payload = build_payload("m", request, SamplingConfig(),
                            {"chat_template_kwargs": {"enable_thinking": False}})
    assert payload["chat_template_kwargs"] == {"think": True, "enable_thinking": False}


async def test_a_run_records_the_ids_sent_and_received_and_replays_them(tmp_path: object
                                                                         ) -> None:
    """Through a real HTTP server: the recorded request holds the prompt ids exactly as sent,
    the formal attempt the answer's ids; the audit re-renders the ids and re-reads the answers
    from them, and a replay of the run reads them to the same decisions without a server."""
    from pathlib import Path

    from authpairs.runs.api import run_async
    from authpairs.runs.audit import audit_run
    from authpairs.runs.config import RunConfig
    from authpairs.runs.store import RecordStore

    records = Path(str(tmp_path)) / "records.sqlite"

    def config(backend: dict[str, object]) -> RunConfig:
        return RunConfig.model_validate({
            "dataset": "examples", "split": "all", "limit": 3, "enforce": False,
            "records": str(records), "concurrency": 1,
            "reviewer": {"interface": "safeguard", "backend": backend,
                         "sampling": {"temperature": 0.0, "max_tokens": 64}}})

    bodies: list[dict[str, object]] = []

    def vllm(path: str, body: bytes) -> tuple[int, object]:
        """vLLM's completions with return_token_ids: the answer's text and its ids."""
        bodies.append(json.loads(body))
        return 200, {"choices": [{"index": 0, "text": ANSWER, "token_ids": harmony_ids(ANSWER),
                                  "finish_reason": "stop"}],
                     "usage": {"prompt_tokens": 400, "completion_tokens": 20}}

    with json_service(vllm, models=("gpt-oss-safeguard-20b",)) as url:
        first = await run_async(config({"kind": "openai", "base_urls": [url + "/v1"],
                                        "model": "gpt-oss-safeguard-20b"}), progress=False)
    replay = await run_async(config({"kind": "replay", "store": str(records),
                                     "run_id": first.run_id}), progress=False)
    with RecordStore(records, readonly=True) as store:
        attempts = store.attempts(first.run_id)
        decisions = [(r.case_id, r.decision) for r in store.case_records(first.run_id)]
        replayed = [(r.case_id, r.decision) for r in store.case_records(replay.run_id)]
        audits = [audit_run(store, run.run_id) for run in (first, replay)]
    for report in audits:
        assert report.ok and not report.skipped, [str(f) for f in report.findings]
        assert report.checked["decisions re-parsed"] == report.checked["inputs re-rendered"] == 3
    assert len(attempts) == 3 and len(bodies) == 3
    sent = sorted(json.dumps(body["prompt"]) for body in bodies)
    recorded = sorted(json.dumps(a.request.prompt_token_ids) for a in attempts if a.request)
    assert sent == recorded
    assert all(a.output_token_ids == harmony_ids(ANSWER) for a in attempts)
    assert sorted(decisions) == sorted(replayed) and {d for _, d in decisions} == {"BLOCK"}


def test_show_prompt_prints_the_ids_sent(examples: Dataset) -> None:
    from typer.testing import CliRunner

    from authpairs.cli import app

    case = examples.cases[0]
    result = CliRunner().invoke(app, ["show-prompt", case.case_id, "--dataset", "examples",
                                      "--interface", "safeguard"])
    assert result.exit_code == 0, result.output
    ids = get_interface("safeguard").render(case.public).prompt_token_ids
    section = "===== prompt token ids (sent; the prompt above is their decoding) =====\n"
    assert section + json.dumps(ids) + "\n" in result.output
