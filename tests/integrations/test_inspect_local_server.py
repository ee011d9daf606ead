"""Integration: ``authpairs/cases`` evaluated by Inspect's ``openai-api`` provider against the
embedded local server (xllamacpp + SmolLM2), then imported as authpairs records.

Asserts that the exact input (schema interface: messages + JSON-schema response format sent via
``extra_body``) reaches the server, that the constrained answers parse, and that the import
matches every sample by its hash -- not the correctness of the tiny model's decisions.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from inspect_ai.model import get_model

from authpairs.backends.local_server import LocalServerBackend
from authpairs.integrations.inspect_import import import_inspect_log
from authpairs.integrations.inspect_tasks import cases
from authpairs.review.outcome import OutcomeStatus
from authpairs.runs.store import RecordStore
from tests.integrations.conftest import INSPECT_WARNINGS, run_inspect

pytestmark = [pytest.mark.slow, pytest.mark.integration, *INSPECT_WARNINGS]


def _wait_healthy(server: LocalServerBackend, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert server.running, "local server exited during start-up"
        try:
            if httpx.get(f"http://127.0.0.1:{server.port}/health", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError("local server not healthy in time")


def test_inspect_against_the_embedded_server_then_import(log_dir: Path,
                                                         records_path: Path) -> None:
    server = LocalServerBackend(n_ctx=8192, n_parallel=2)
    server.start()
    try:
        _wait_healthy(server)
        model = get_model(f"openai-api/local/{server.gguf_path.stem}", base_url=server.base_url,
                          api_key="unused", max_retries=1)
        task = cases(dataset="examples", interface="schema", split="all", limit=2,
                     enforce=False)
        task.config.seed = 7
        # Without a penalty the tiny model repeats itself inside a JSON string until the token
        # limit (2,048 tokens, most of the test's time); the main job uses repetition_penalty
        # for the same reason. presence_penalty is the OpenAI parameter Inspect sends.
        task.config.presence_penalty = 1.5
        log = run_inspect(task, log_dir, model=model)
    finally:
        server.stop()
    assert log.samples is not None and len(log.samples) == 2
    (result,) = import_inspect_log(Path(log.location), "local-inspect", records_path)
    assert result.imported == 2 and not result.errored
    with RecordStore(records_path) as store:
        records = store.case_records("local-inspect")
        attempts = store.attempts("local-inspect")
        info = store.get_run("local-inspect")
    assert info is not None and (info.config["resolved"]["reviewer"]["sampling"]
            ["presence_penalty"] == 1.5)
    assert [a.kind for a in attempts] == ["formal", "formal"]
    for record in records:
        assert record.input_tokens > 0 and record.output_tokens > 0
        # Constrained decoding: a clean decision or abstention unless the token limit hit.
        assert record.status is not OutcomeStatus.UNAVAILABLE or record.reason_code == "length"
