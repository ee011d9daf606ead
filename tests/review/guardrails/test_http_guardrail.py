"""HTTP guardrail service: a real loopback server, transport rules, garbage replies."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from authpairs.backends.config import SamplingConfig
from authpairs.cases.dataset import Dataset
from authpairs.errors import BackendError, ReviewerError, TransportError
from authpairs.review.guardrails.http_service import HttpGuardrail, HttpGuardrailReviewer
from authpairs.review.outcome import Decision, OutcomeStatus, ReasonCode
from authpairs.runs.api import run_async
from authpairs.runs.config import RunConfig
from authpairs.runs.store import RecordStore
from tests.loopback import json_service

RECEIVED: list[dict[str, object]] = []


def _reply(path: str, raw: bytes) -> tuple[int, object]:
    body = json.loads(raw)
    RECEIVED.append({"path": path, "body": body})
    replies = {
        "/verdict": (200, json.dumps({"result": {"label": "unsafe" if "refund" in
                                                 json.dumps(body) else "safe"}})),
        "/plain": (200, json.dumps({"decision": "ALLOW"})),
        "/garbage": (200, "<html>oops</html>"),
        "/nofield": (200, json.dumps({"other": 1})),
        "/odd": (200, json.dumps({"result": {"label": "perhaps"}})),
        "/busy": (503, "busy"),
        "/bad": (400, "bad request"),
    }
    return replies.get(path, (404, "no"))


@pytest.fixture(scope="module")
def service() -> Iterator[str]:
    with json_service(_reply) as url:
        yield url


def _reviewer(**options: object) -> HttpGuardrailReviewer:
    return HttpGuardrail().build("http", dict(options), None, SamplingConfig())


async def _outcomes(reviewer: HttpGuardrailReviewer, examples: Dataset) -> list[object]:
    async with reviewer:
        result = []
        for case in examples.cases[:2]:
            response = await reviewer.answer(reviewer.render(case.public))
            result.append(reviewer.parse(response))
        return result


async def test_public_case_posted_and_field_mapped(service: str, examples: Dataset) -> None:
    RECEIVED.clear()
    reviewer = _reviewer(url=f"{service}/verdict", field="result.label",
                         values={"safe": "ALLOW", "unsafe": "BLOCK"})
    outcomes = await _outcomes(reviewer, examples)
    assert all(o.decision is Decision.BLOCK for o in outcomes)  # type: ignore[attr-defined]
    body = RECEIVED[0]["body"]
    assert isinstance(body, dict) and set(body) <= {"source_id", "request", "policy",
                                                    "evidence", "effect"}
    assert "reference" not in json.dumps(body) and "label" not in body


async def test_prompt_mode_posts_messages(service: str, examples: Dataset) -> None:
    RECEIVED.clear()
    outcomes = await _outcomes(_reviewer(url=f"{service}/plain", send="prompt"), examples)
    assert all(o.decision is Decision.ALLOW for o in outcomes)  # type: ignore[attr-defined]
    body = RECEIVED[0]["body"]
    assert isinstance(body, dict) and body["messages"][0]["role"] == "system"


@pytest.mark.parametrize(("path", "options", "reason"), [
    ("/garbage", {}, ReasonCode.NOT_JSON),
    ("/nofield", {}, ReasonCode.MISSING_FIELD),
    ("/odd", {"field": "result.label", "values": {"safe": "ALLOW"}}, ReasonCode.INVALID_VALUE),
    ("/odd", {"field": "result.label"}, ReasonCode.NO_LABEL),
    ("/odd", {"field": "result"}, ReasonCode.WRONG_TYPE),
])
async def test_garbage_is_unavailable_with_a_reason(service: str, examples: Dataset, path: str,
                                                    options: dict[str, object],
                                                    reason: ReasonCode) -> None:
    outcomes = await _outcomes(_reviewer(url=f"{service}{path}", **options), examples)
    for outcome in outcomes:
        assert outcome.status is OutcomeStatus.UNAVAILABLE  # type: ignore[attr-defined]
        assert outcome.reason_code is reason  # type: ignore[attr-defined]


async def test_transport_rules_match_the_model_backends(service: str,
                                                        examples: Dataset) -> None:
    with pytest.raises(TransportError, match="HTTP 503"):
        await _outcomes(_reviewer(url=f"{service}/busy"), examples)
    with pytest.raises(BackendError, match="HTTP 400"):
        await _outcomes(_reviewer(url=f"{service}/bad"), examples)
    with pytest.raises(TransportError):
        await _outcomes(_reviewer(url="http://127.0.0.1:9/none"), examples)
    with pytest.raises(ReviewerError, match=r"guardrail_options\.url"):
        _reviewer(field="x")
    with pytest.raises(ReviewerError, match="values"):
        _reviewer(url=service, values={"x": "MAYBE"})


@pytest.mark.slow  # several seconds: the slow tier (.ci/run) runs it
async def test_a_run_against_a_busy_service_records_infrastructure_only(
        service: str, examples: Dataset, records_path: Path) -> None:
    config = RunConfig(dataset="examples", records=str(records_path), enforce=False,
                       infra_retries=1, reviewer={"guardrail": "http",
                                                  "guardrail_options": {"url": f"{service}/busy"}})
    state = await run_async(config, progress=False)
    assert len(state.infrastructure_failed) == len(examples.cases)
    with RecordStore(records_path) as store:
        assert store.case_records(config.resolved_run_id()) == []
