"""Fault injection: the OpenAI-compatible backend and a whole run against a fake server that
returns 500s, 429 with Retry-After, resets, hangs, invalid and malformed bodies, and trickles.

Every fault is an infrastructure attempt (retried, never scored) with its cause recorded; a run
ends with every case recorded once, or says which causes left cases without a record.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from authpairs.backends.base import ChatRequest
from authpairs.backends.config import SamplingConfig
from authpairs.backends.openai_http import OpenAIBackend, parse_completion, retry_after_seconds
from authpairs.cases.dataset import Dataset
from authpairs.errors import TransportError
from authpairs.runs import case_runner, retry
from authpairs.runs.api import run_async
from authpairs.runs.config import RunConfig, config_from_dict
from authpairs.runs.store import RecordStore
from tests.backends.fake_server import FaultServer, completion_body

REQUEST = ChatRequest(messages=[{"role": "user", "content": "hi"}])
GOOD = completion_body('{"decision": "ALLOW"}')
MALFORMED = [
    ({"choices": ["not an object"]}, "choices[0] is str"),
    ({"choices": [{"message": None, "finish_reason": "stop"}]}, "message is null"),
    ({"choices": [{"message": {"content": [{"type": "text", "text": "x"}]}}]},
     "content is list"),
    ({**GOOD, "usage": {"prompt_tokens": "many"}}, "prompt_tokens is str"),
    ({**GOOD, "usage": {"completion_tokens": 1.5}}, "completion_tokens is 1.5"),
    ({**GOOD, "usage": ["x"]}, "'usage' is not an object"),
    ({"choices": []}, "'choices' is missing or empty"),
    (["a list"], "top level is list"),
]


@pytest.mark.parametrize(("body", "cause"), MALFORMED)
def test_malformed_bodies_are_transport_errors(body: object, cause: str) -> None:
    with pytest.raises(TransportError, match="malformed completion body") as info:
        parse_completion(body)
    assert cause in str(info.value)


def test_retry_after_header_forms() -> None:
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds(" 0.5 ") == 0.5
    assert retry_after_seconds("-4") == 0.0
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past


@pytest.mark.parametrize(("fault", "cause"), [
    ("500", "HTTP 500"), ("503", "HTTP 503"), ("429:2", "HTTP 429"), ("reset", "Error"),
    ("hang", "timeout"), ("invalid", "not JSON"), ("trickle:3", "timeout"),
    ('body:{"choices": [{"message": null}]}', "message is null"),
])
async def test_each_fault_is_a_transport_error_with_its_cause(fault: str, cause: str) -> None:
    async with FaultServer([fault]) as server:
        backend = OpenAIBackend([server.base_url], "m", deadline_s=1.0)
        async with backend:
            with pytest.raises(TransportError) as info:
                await backend.complete(REQUEST, SamplingConfig())
    assert cause in str(info.value)
    if fault.startswith("429"):
        assert info.value.retry_after == 2.0


async def test_a_slow_trickle_within_the_deadline_is_fine() -> None:
    async with FaultServer(["trickle:0.3"]) as server, OpenAIBackend(
            [server.base_url], "m", deadline_s=5.0) as backend:
        response = await backend.complete(REQUEST, SamplingConfig())
    assert response.text == '{"decision": "ALLOW"}' and response.input_tokens == 11


def _config(server: FaultServer, records: Path, retries: int, deadline: float = 1.0
            ) -> RunConfig:
    return config_from_dict({
        "dataset": "examples", "split": "all", "enforce": False, "concurrency": 2,
        "infra_retries": retries, "records": str(records), "run_id": "faults",
        "reviewer": {"interface": "direct", "backend": {
            "kind": "openai", "base_urls": [server.base_url], "model": "m",
            "deadline_s": deadline}}})


async def test_a_run_through_every_fault_records_each_case_once(
        tmp_path: Path, examples: Dataset, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(case_runner.CaseRunner, "retry_delay",
                        lambda self, n, exc: min(exc.retry_after or 0.01, 0.3))
    faults = ["500", "429:0.2", "reset", "hang", "invalid", "trickle:3",
              'body:{"choices": ["x"]}', 'body:{"choices": [{"message": null}]}',
              'body:{"choices": [{"message": {"content": ["a"]}}]}',
              'body:{"choices": [{"message": {"content": "{}"}}], "usage": {"prompt_tokens": "x"}}']
    records = tmp_path / "r.sqlite"
    async with FaultServer(faults) as server:
        config = _config(server, records, retries=len(faults))
        state = await run_async(config, progress=False)
    assert state.completed_now == len(examples) and not state.infrastructure_failed
    with RecordStore(records, readonly=True) as store:
        cases = store.case_records("faults")
        attempts = store.attempts("faults")
    assert len(cases) == len(examples) == len({c.case_id for c in cases})
    infra = [a for a in attempts if a.kind == "infrastructure"]
    formal = [a for a in attempts if a.kind == "formal"]
    assert len(infra) == len(faults) and len(formal) == len(examples)
    assert all(a.error for a in infra)
    assert sum(c.infra_attempts for c in cases) == len(faults)
    assert all(c.decision is not None and c.decision.value == "ALLOW" for c in cases)
    joined = " | ".join(a.error or "" for a in infra)
    for cause in ("HTTP 500", "HTTP 429", "timeout", "not JSON", "message is null",
                  "content is list", "prompt_tokens is str", "choices[0] is str"):
        assert cause in joined
    assert "retrying" in caplog.text and "HTTP 500" in caplog.text


async def test_retry_after_is_honoured_and_bounded(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry, "MAX_RETRY_AFTER_S", 0.8)
    async with FaultServer(["429:0.6", "429:1000"]) as server:
        config = _config(server, tmp_path / "r.sqlite", retries=2)
        config.limit = 1
        started = time.monotonic()
        state = await run_async(config, progress=False)
        elapsed = time.monotonic() - started
    assert state.completed_now == 1
    assert 0.6 + 0.8 <= elapsed < 10  # waited the hint, and the huge one only up to the bound


async def test_exhausted_retries_leave_no_record_and_name_the_causes(tmp_path: Path) -> None:
    async with FaultServer(default="500") as server:
        config = _config(server, tmp_path / "r.sqlite", retries=1)
        state = await run_async(config, progress=False)
    assert state.completed_now == 0 and len(state.infrastructure_failed) == 8
    assert state.cause_summary() == {"HTTP 500: {\"error\": \"injected\"}": 8}
    with RecordStore(tmp_path / "r.sqlite", readonly=True) as store:
        assert store.case_records("faults") == []
        assert len(store.attempts("faults")) == 16


@pytest.mark.slow  # several seconds: the slow tier (.ci/run) runs it
def test_cli_prints_the_causes_of_infrastructure_failures(tmp_path: Path) -> None:
    import asyncio
    import subprocess
    import sys
    import threading

    from tests.conftest import REPO_ROOT

    loop = asyncio.new_event_loop()
    server = FaultServer(default="503")
    loop.run_until_complete(server.__aenter__())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "authpairs.cli", "run", "--dataset", "examples", "--split",
             "all", "--limit", "2", "--interface", "direct", "--backend", "openai",
             "--base-url", server.base_url, "--model", "m", "--no-enforce", "--quiet",
             "--deadline", "2", "--records", str(tmp_path / "r.sqlite"), "--run-id", "c1"],
            capture_output=True, text=True, timeout=120, cwd=REPO_ROOT,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT / "src")})
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.run_until_complete(server.__aexit__(None, None, None))
        loop.close()
    assert done.returncode == 3, done.stderr
    out = done.stdout + done.stderr
    assert "2 cases had only infrastructure failures" in " ".join(out.split())
    assert "2 x HTTP 503" in out
    assert "retrying" in done.stderr and "Traceback" not in out
    assert "0 recorded of 2 expected" in out and "n/a" in out and "0.0%" not in out
